/* Redis 7.0 functions: the shared library registry (script_func.c), private to src/script. */
#ifndef TC_SCRIPT_FUNC_H
#define TC_SCRIPT_FUNC_H

#include <stddef.h>
#include <stdint.h>

struct func_fn {
    char *name;
    char *desc; /* or NULL */
    int flags; /* SCRIPT_FLAG_* (SCRIPT_FLAG_SHEBANG always set) */
};

struct func_lib {
    char *name;
    char *code; /* NUL-terminated, code_n bytes */
    size_t code_n;
    struct func_fn *fns;
    int nfn;
    struct func_lib *next;
};

#define FUNC_RESTORE_APPEND 0
#define FUNC_RESTORE_REPLACE 1
#define FUNC_RESTORE_FLUSH 2

/* ---- func_payload.c (no Lua) ---- */

/* "#!lua name=<lib>" on the first line of code: the library name in *name (malloc'd) and the
 * length of the line in *skip, or -1 with the error (without "ERR ") in err. */
int func_parse_meta(const char *code, size_t n, char **name, size_t *skip, char *err,
                    size_t cap);
/* Check a FUNCTION DUMP payload (version, CRC64) and call each for every library's code (a
 * non-zero return stops: -1). -1 with the error in err when the payload is malformed. */
int func_payload_split(const char *payload, size_t n,
                       int (*each)(void *arg, const char *code, size_t n), void *arg, char *err,
                       size_t cap);
/* 1 when p[0..n) is a valid library or function name */
int func_name_ok(const char *p, size_t n);
/* the i-th known function flag's name (and its bit in *flag), NULL past the last */
const char *func_flag_name(int i, int *flag);
/* Check and compile library code (its "#!lua name=" line, its body run on this thread's
 * state in loading mode): the library (not yet in the registry), or NULL with the error
 * (without "ERR ") in err. */
struct func_lib *func_compile(const char *code, size_t n, char *err, size_t cap);
/* Add lib (compiled) to the registry, replacing the library of its name when replace; takes
 * lib either way. -1 with the error in err. */
int func_add(struct func_lib *lib, int replace, char *err, size_t cap);
/* Restore a list of compiled libraries (FUNCTION RESTORE policy); takes the list. */
int func_restore(struct func_lib *list, int policy, char *err, size_t cap);
int func_delete(const char *name, size_t n);
void func_flush(void);
void func_list_free(struct func_lib *list);
/* fn for every library, under the registry's lock */
void func_each(void (*fn)(const struct func_lib *lib, void *arg), void *arg);
/* fn for every library, then mid, then fn for every library again, under one lock */
void func_each2(void (*fn)(const struct func_lib *lib, void *arg), void *arg,
                void (*mid)(void *marg), void *marg);
struct buf;
/* Append every library as an RDB_OPCODE_FUNCTION2 record (cmd_function.c). */
void func_rdb_write(struct buf *b);
void func_setup(void);
/* main thread, once: the registry's lock handled across fork */
void func_init(void);
void func_counts(long *nlibs, long *nfns, size_t *bytes);
/* Flags of function name in this thread's state (loaded if the registry changed): -1 when
 * there is no such function, -2 out of memory. */
int func_lookup(const char *name, size_t n);
/* func_lookup that also copies the function's name as registered into real (cap bytes). */
int func_lookup_name(const char *name, size_t n, char *real, size_t cap);

#endif
