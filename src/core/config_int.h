/* Inside the configuration module: the table of settings that config.c (parsing, CONFIG
 * GET/SET) and config_rewrite.c (CONFIG REWRITE) share. Not for other modules. */
#ifndef TC_CONFIG_INT_H
#define TC_CONFIG_INT_H

#include <stddef.h>

#include "core/config.h"

enum ctype { C_INT, C_LL, C_MEM, C_STR, C_BOOL, C_ENUM, C_LOGLEVEL, C_COBL, C_NOTIFY,
             C_OCTAL,   /* an int written and read in octal (unixsocketperm) */
             C_MEMPCT,  /* a memory size or "N%" (stored as -N), maxmemory-clients */
             C_FLAGS }; /* several enum words OR-ed (shutdown-on-sigterm) */

/* setting flags */
#define F_HIDDEN 1   /* CONFIG GET names it only exactly (Redis's HIDDEN_CONFIG) */
#define F_ONLY_NO 2  /* a bool whose "yes" is refused (deny_msg says why) */
#define F_MEM 4      /* a C_INT or C_LL read as a memory value ("1kb"), rewritten as one */
#define F_NULLSTR 8  /* a string whose "" is Redis's NULL: no line in CONFIG REWRITE, and any
                      * other value is always written (Redis's EMPTY_STRING_IS_NULL) */

struct setting {
    const char *name;
    enum ctype type;
    void *ptr;
    size_t cap;        /* for strings */
    long long min, max;
    int mutable_;
    const char *const *enums;
    int flags;           /* F_* */
    const char *deny_msg; /* F_ONLY_NO: why "yes" is refused */
};

extern struct setting config_settings[];
extern const size_t config_nsettings;
extern struct config config_default_values; /* as config_defaults left them */
/* Redis's reading_config_file: 1 while a file's text is parsed (config_load.c); save lines
 * then add up (an include ends it: the save lines after one replace the list, as Redis's) */
extern int config_save_reading;

/* The setting named name (any case, aliases too), or NULL. */
struct setting *config_find(const char *name);
/* The value of setting s read from the config struct at base (cfg, or the defaults), as
 * CONFIG GET shows it. */
void config_format_at(const struct setting *s, const struct config *base, char *out,
                      size_t cap);

#endif
