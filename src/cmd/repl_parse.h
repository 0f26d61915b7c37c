/* The replica's parser of its primary's stream (repl_replica.c): one command, a RESP array of
 * bulk strings, at a time, or a keep-alive newline between commands. No allocation but the
 * argument arrays the caller owns (grown here, bounded by REPL_MAX_ARGS); bulk lengths are
 * checked against max_bulk before anything is read past their header. */
#ifndef TC_REPL_PARSE_H
#define TC_REPL_PARSE_H

#include <stddef.h>

#define REPL_MAX_ARGS (1 << 20)

struct repl_args {
    const char **argv; /* into the parsed bytes */
    size_t *lens;
    int cap;
};

/* Parse one command at p[0..n): 1 complete (*argc arguments in a, 0 for a keep-alive newline,
 * *used its bytes), 0 incomplete (feed more), -1 malformed (the link must be dropped). */
int repl_parse(const char *p, size_t n, long long max_bulk, struct repl_args *a, int *argc,
               size_t *used);
/* repl_parse writing the arguments at a->argv[base..] and a->lens[base..] (the arrays grow
 * to hold them): a batch of commands parsed one after the other into one array. */
int repl_parse_at(const char *p, size_t n, long long max_bulk, struct repl_args *a, int base,
                  int *argc, size_t *used);
void repl_args_free(struct repl_args *a);

#endif
