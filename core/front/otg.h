/* SPDX-License-Identifier: BSD-3-Clause
 *
 * otg.h - `surge otg`'s HTTP(S) server (otg_http.c) and its certificate
 * (otg_cert.c), private to the front end. Lua reaches the server through
 * the FFI (surge_otg_* in surge.h); nothing here calls into Lua.
 */
#ifndef SURGE_OTG_H
#define SURGE_OTG_H

#include <stddef.h>

#include "cli.h"

/* The certificate and key to serve, PEM, malloc'd: the files given
 * (cert and key both, or neither), or the self-signed pair kept in the
 * user's state folder (made at the first start). info: one line saying
 * which, for the start-up message. 0 or -errno with err set. */
int otg_cert_load(const char *cert, const char *key, char **cert_pem, char **key_pem, char *info,
		  size_t infolen, char *err, size_t errlen);

/* Before EAL: binds --listen and loads the certificate, so a port in use or
 * an unreadable --cert fails like a bad option (exit 2) with nothing
 * started. The server itself starts when the Lua program opens it. */
int otg_prepare(const struct surge_opts *o, char *err, size_t errlen);
/* At exit: what otg_prepare kept and no server took (the watchdog's path
 * does not need it: the process ends). */
void otg_release(void);

#endif
