/* The crash report on fatal signals (crash.c). */
#ifndef TC_CRASH_H
#define TC_CRASH_H

/* Main thread at start-up, after the configuration is read: install the handlers unless
 * crash-log-enabled is no. */
void crash_setup(void);

#endif
