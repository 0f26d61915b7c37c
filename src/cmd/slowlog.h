/* SLOWLOG: a process-wide ring of the slowest commands, guarded by one mutex that is taken
 * only when a command was slow (or by SLOWLOG itself). */
#ifndef TC_SLOWLOG_H
#define TC_SLOWLOG_H

#include <stdint.h>

struct conn;

/* Record the command in c->argv as taking dur_us. Any worker. */
void slowlog_push(struct conn *c, int64_t dur_us);
/* SLOWLOG GET [n] / LEN / RESET / HELP */
void slowlog_command(struct conn *c);

#endif
