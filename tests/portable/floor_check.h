/* The glibc floor's check: the calls it wraps, made plainly and with 64-bit file offsets. */
#ifndef FLOOR_CHECK_H
#define FLOOR_CHECK_H

#define STR(x) STR2(x)
#define STR2(x) #x

/* Number of failed checks, each printed; self is the program's path. */
int floor_calls(const char *self);
int floor_calls_64(const char *self);

#endif
