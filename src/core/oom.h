/* oom-score-adj: the process's /proc/self/oom_score_adj set from oom-score-adj-values, per
 * class, as Redis's setOOMScoreAdj: relative to the value found when twincache first set it
 * (yes, relative) or absolute, clamped to [-1000, 1000]; set back to that first value when
 * oom-score-adj goes to no. */
#ifndef TC_OOM_H
#define TC_OOM_H

enum { OOM_CLASS_MASTER = 0, OOM_CLASS_REPLICA = 1, OOM_CLASS_BGCHILD = 2 };

/* Parse oom-score-adj-values ("master replica bgchild", each in [-2000, 2000]) into out.
 * 0 or -1. */
int oom_values_parse(const char *s, int out[3]);
/* Apply cls's value now (or restore the first value when oom-score-adj is no). 0, or -1
 * after a warning in the log (the file could not be read or written). Any thread; callers
 * serialize (CONFIG SET, start-up, a forked child). */
int oom_score_apply(int cls);
/* A background child's value (the bgchild class), computed in the parent before its fork:
 * INT_MIN when oom-score-adj is off. oom_score_child_apply writes it in the child (open and
 * write only: safe after a threaded process's fork). */
int oom_score_child_value(void);
void oom_score_child_apply(int val);

#endif
