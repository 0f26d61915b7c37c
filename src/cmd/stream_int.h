/* Internal to the stream family (cmd_stream.c, cmd_stream_cg.c, cmd_stream_pel.c): ID parsing,
 * the replies of IDs and entries, and the AOF forms of consumer-group changes. Everything runs
 * on the connection's worker; the functions that read a stream want its key's stripe held. */
#ifndef TC_STREAM_INT_H
#define TC_STREAM_INT_H

#include <stdint.h>
#include <string.h>

#include "cmd/cmd.h"
#include "store/t_stream.h"
#include "store/t_stream_cg.h"

#define ERR_BADID "ERR Invalid stream ID specified as stream command argument"

/* The stream it holds (borrowed), or NULL when it is NULL. */
static inline struct tstream *stream_of(struct item *it)
{
    return it ? item_ptr(it) : NULL;
}

/* now - t without overflow (times come from clients and files): wraps as two's complement. */
static inline long long stream_idle_ms(int64_t now, int64_t t)
{
    return (long long)((uint64_t)now - (uint64_t)t);
}

/* Redis's string2ull: strict decimal, or what strtoull accepts in full. 1 when parsed. */
int stream_str2ull(const char *s, unsigned long long *v);
/* streamGenericParseIDOrReply: a (borrowed) into *id; "-" and "+" are the smallest and the
 * largest IDs unless strict, a missing sequence is missing_seq. seq_given NULL: "ms-*" is
 * invalid, otherwise it is accepted and *seq_given set to 0. 0, or -1 after replying. */
int stream_parse_id(struct conn *c, const struct slice *a, struct sid *id, uint64_t missing_seq,
                    int strict, int *seq_given);
/* An interval bound argv[i]: "(" excludes (*ex set), streamParseIntervalIDOrReply. 0 or -1
 * after replying. */
int stream_parse_interval(struct conn *c, int i, struct sid *id, int *ex, uint64_t missing_seq);
/* The next / previous ID: -1 (id unchanged) past the largest / below the smallest. */
int stream_id_incr(struct sid *id);
int stream_id_decr(struct sid *id);

/* Reply an ID as a bulk string "ms-seq". */
void stream_reply_id(struct conn *c, const struct sid *id);
/* Reply the entry e ([id, [field, value...]]); consumes e's field iterator. */
void stream_reply_entry(struct conn *c, struct sent *e);
/* Reply the entry id of t ([id, fields]), or nothing: 1 when it exists. */
int stream_reply_entry_id(struct conn *c, struct tstream *t, const struct sid *id);

/* The AOF forms of group changes (cmd_stream_pel.c), propagated under the stripe of key when
 * cmd_prop_on(c): the claim of pending entry nk (XCLAIM ... FORCE JUSTID LASTID), the drop of
 * a pending entry whose stream entry is gone, group g's last ID and entries-read (XGROUP
 * SETID), and consumer cs's creation (XGROUP CREATECONSUMER). */
void stream_prop_claim(struct conn *c, const struct slice *key, const struct sgroup *g,
                       const struct sid *id, const struct snack *nk);
void stream_prop_drop(struct conn *c, const struct slice *key, const struct sgroup *g,
                      const struct sid *id, const struct scons *owner);
void stream_prop_setid(struct conn *c, const struct slice *key, const struct sgroup *g);
void stream_prop_consumer(struct conn *c, const struct slice *key, const struct sgroup *g,
                          const struct scons *cs);

/* Register the commands of cmd_stream_cg.c / cmd_stream_pel.c (from cmd_stream_setup). */
void cmd_stream_cg_setup(void);
void cmd_stream_pel_setup(void);

/* Lock the stripe of the key argv[1] (into *k; it stays locked whatever the result, the caller
 * unlocks) and find the consumer group argv[2] of its stream (read or write lookup): the
 * group, with *itp the stream's item; NULL with *wrong set after the WRONGTYPE reply; NULL
 * with *wrong clear when the key or the group is missing (nothing replied). */
struct sgroup *stream_group_locked(struct conn *c, struct skey *k, int write, struct item **itp,
                                   int *wrong);

/* Whether keys[i] names a key that comes earlier among keys: a blocked reader waits on each
 * key once (its first ID), so Redis serves a key named twice once when it wakes it. */
static inline int stream_key_repeated(const struct skey *keys, int i)
{
    for (int j = 0; j < i; j++)
        if (keys[j].n == keys[i].n && memcmp(keys[j].p, keys[i].p, keys[i].n) == 0)
            return 1;
    return 0;
}

#endif
