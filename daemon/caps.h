/* caps.h - the capabilities scalemond needs only while it starts (caps.c). */
#ifndef SCALEMON_CAPS_H
#define SCALEMON_CAPS_H

/* Drop CAP_DAC_READ_SEARCH, CAP_BPF and CAP_SYSLOG from the effective,
 * permitted and inheritable sets: 1 if one was held, 0 if none, or
 * -errno. */
int caps_drop_start_up(void);

#endif
