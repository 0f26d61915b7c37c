/* The process title, as redis-server 7.0's set-proc-title / proc-title-template: the memory of
 * argv (and of the environment strings right after it) is rewritten so ps and
 * /proc/<pid>/cmdline show the expanded template, e.g. "twincache 127.0.0.1:6379". */
#ifndef TC_PROCTITLE_H
#define TC_PROCTITLE_H

#include <stddef.h>

/* Expand tmpl into out (cap bytes) with title standing for {title}; the other variables
 * ({listen-addr} {server-mode} {port} {tls-port} {unixsocket} {config-file}) come from cfg.
 * "{{" is a literal '{'. The result is trimmed of spaces at both ends. Returns its length, or
 * -1 when the template is malformed (a '{' without its '}') or names an unknown variable. */
int proctitle_expand(const char *tmpl, const char *title, char *out, size_t cap);
/* 0 when tmpl is a valid template (CONFIG SET's check: it expands, and not to nothing). */
int proctitle_validate(const char *tmpl);
/* Main thread, once, before any thread and before argv or environ are used again: move the
 * environment and argv[] strings to the heap (argv[i] is pointed at its copy) so their memory
 * can hold the title. config_file: the path {config-file} shows (NULL: "-"); copied. */
void proctitle_init(int argc, char **argv, const char *config_file);
/* Write the expanded cfg.proc_title_template as the title. 0, or -1 (not initialised, or an
 * invalid template). Any thread (CONFIG SET): serialized inside. */
int proctitle_apply(void);
/* In a fork child (one thread; takes no lock): the template with title as {title}, as
 * redis-server titles its children ("redis-rdb-bgsave 127.0.0.1:6379"). 0 or -1. */
int proctitle_apply_child(const char *title);

#endif
