/* The Lua debugger's input (SCRIPT DEBUG sessions, script_ldb.c): one command is an array of
 * bulk strings, read as leniently as Redis 7.0 reads it (bytes before the first '*' are
 * skipped, the numbers are read like atoi), with its limits: 1..LDB_ARG_MAX arguments of
 * 1..LDB_ARG_MAX bytes each. Pure: no I/O, no allocation. */
#ifndef TC_LDB_PARSE_H
#define TC_LDB_PARSE_H

#include <stddef.h>

#define LDB_ARG_MAX 1024

struct ldb_cmd {
    int argc;
    const char *argv[LDB_ARG_MAX]; /* borrowed from the input, not NUL-terminated */
    size_t argl[LDB_ARG_MAX];
    size_t used;                   /* input bytes up to the end of the command */
};

/* Parse one command from b[0..n). Returns its argc (> 0) with cmd filled in, 0 when more
 * input is needed, -1 on a protocol error (the session then ends, as in Redis). */
int ldb_parse(const char *b, size_t n, struct ldb_cmd *cmd);

#endif
