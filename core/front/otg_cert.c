/* SPDX-License-Identifier: BSD-3-Clause
 *
 * otg_cert.c - the certificate `surge otg` serves HTTPS with: the user's
 * (--cert/--key), or a self-signed one made with GnuTLS at the first start
 * and kept for the next ones in $XDG_STATE_HOME/surge/otg/ (else
 * ~/.local/state/surge/otg/), the folder 0700 and the files 0600: the key
 * is a secret of this user. snappi and Ixia-c's clients connect with
 * verify=False, so a certificate nobody signed serves them as it serves
 * Ixia-c's users; CN=localhost with localhost, 127.0.0.1 and ::1 as names
 * lets a client that does verify pin it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "otg.h"

#define CERT_DAYS 3650
#define PEM_MAX (64u << 10)   /* a certificate or key file larger than this is not one */

static int
errf(char *err, size_t errlen, int rc, const char *fmt, const char *a, const char *b)
{
	snprintf(err, errlen, fmt, a, b);
	return rc;
}

/* Reads a whole PEM file (at most PEM_MAX bytes) into a NUL-ended buffer. */
static int
read_pem(const char *what, const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (f == NULL)
		return errf(err, errlen, -errno, "%s: cannot read '%s'", what, path);
	if ((buf = malloc(PEM_MAX + 1)) == NULL) {
		fclose(f);
		return errf(err, errlen, -ENOMEM, "%s: out of memory%s", what, "");
	}
	n = fread(buf, 1, PEM_MAX + 1, f);
	fclose(f);
	if (n == 0 || n > PEM_MAX || strstr((buf[n] = '\0', buf), "-----BEGIN ") == NULL) {
		free(buf);
		return errf(err, errlen, -EINVAL, "%s: '%s' is not a PEM file", what, path);
	}
	*out = buf;
	return 0;
}

/* mkdir -p with mode 0700 for the parts it makes. */
static int
make_dirs(char *path)
{
	for (char *p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0700) != 0 && errno != EEXIST ? -errno : 0;
}

/* Writes data to path through a temporary file (mode 0600) and a rename:
 * a second surge starting at the same time reads a whole file or none. */
static int
write_private(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	int fd, rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len)
		rc = -EIO;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* A fresh ECDSA P-256 key and a self-signed certificate for it, both PEM. */
static int
make_self_signed(gnutls_datum_t *cert_pem, gnutls_datum_t *key_pem)
{
	static const unsigned char lo4[4] = { 127, 0, 0, 1 };
	static const unsigned char lo6[16] = { [15] = 1 };
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	unsigned char serial[16];
	time_t now = time(NULL);
	int rc;

	if ((rc = gnutls_x509_privkey_init(&key)) < 0 || (rc = gnutls_x509_crt_init(&crt)) < 0)
		goto out;
	if ((rc = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
					       GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0)
		goto out;
	if ((rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial))) < 0)
		goto out;
	serial[0] &= 0x7f;            /* a positive serial number (RFC 5280) */
	if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (rc = gnutls_x509_crt_set_serial(crt, serial, sizeof(serial))) < 0 ||
	    (rc = gnutls_x509_crt_set_activation_time(crt, now - 3600)) < 0 ||
	    (rc = gnutls_x509_crt_set_expiration_time(crt, now + (time_t)CERT_DAYS * 86400)) < 0 ||
	    (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "localhost", 9)) < 0 ||
	    (rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9,
						      GNUTLS_FSAN_SET)) < 0 ||
	    (rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, lo4, 4, GNUTLS_FSAN_APPEND)) < 0 ||
	    (rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, lo6, 16, GNUTLS_FSAN_APPEND)) < 0 ||
	    (rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
	    (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
	    (rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
	    (rc = gnutls_x509_crt_set_key(crt, key)) < 0 ||
	    (rc = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0)) < 0)
		goto out;
	if ((rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, cert_pem)) < 0)
		goto out;
	if ((rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, key_pem)) < 0) {
		gnutls_free(cert_pem->data);
		cert_pem->data = NULL;
	}
out:
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	if (key != NULL)
		gnutls_x509_privkey_deinit(key);
	return rc;
}

/* The folder the made certificate lives in. */
static int
state_dir(char *out, size_t len)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(out, len, "%s/surge/otg", xdg);
	else if (home != NULL && home[0] == '/')
		n = snprintf(out, len, "%s/.local/state/surge/otg", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int
otg_cert_load(const char *cert, const char *key, char **cert_pem, char **key_pem, char *info, size_t infolen,
	      char *err, size_t errlen)
{
	char dir[PATH_MAX - 16], cpath[PATH_MAX], kpath[PATH_MAX];
	gnutls_datum_t c = { 0 }, k = { 0 };
	struct stat st;
	int rc;

	*cert_pem = *key_pem = NULL;
	info[0] = '\0';
	if (cert != NULL || key != NULL) {
		if (cert == NULL || key == NULL)
			return errf(err, errlen, -EINVAL, "option %s: give --cert and --key together%s",
				    cert == NULL ? "--key" : "--cert", "");
		if ((rc = read_pem("option --cert", cert, cert_pem, err, errlen)) != 0)
			return rc;
		if ((rc = read_pem("option --key", key, key_pem, err, errlen)) != 0) {
			free(*cert_pem);
			*cert_pem = NULL;
		}
		return rc;
	}
	if ((rc = state_dir(dir, sizeof(dir))) != 0)
		return errf(err, errlen, rc, "HTTPS: no folder for the certificate (set HOME or XDG_STATE_HOME, "
			    "or give --cert and --key, or serve --http)%s%s", "", "");
	snprintf(cpath, sizeof(cpath), "%s/cert.pem", dir);
	snprintf(kpath, sizeof(kpath), "%s/key.pem", dir);
	if (stat(cpath, &st) == 0 && stat(kpath, &st) == 0) {
		if ((rc = read_pem("HTTPS certificate", cpath, cert_pem, err, errlen)) != 0)
			return rc;
		if ((rc = read_pem("HTTPS key", kpath, key_pem, err, errlen)) != 0) {
			free(*cert_pem);
			*cert_pem = NULL;
			return rc;
		}
		snprintf(info, infolen, "HTTPS with the certificate %s", cpath);
		return 0;
	}
	if ((rc = make_dirs(dir)) != 0)
		return errf(err, errlen, rc, "HTTPS: cannot make the folder %s: %s", dir, strerror(-rc));
	if ((rc = make_self_signed(&c, &k)) < 0)
		return errf(err, errlen, -EIO, "HTTPS: GnuTLS could not make a certificate: %s%s",
			    gnutls_strerror(rc), "");
	/* the key first: a certificate without its key is never left behind */
	if ((rc = write_private(kpath, (const char *)k.data, k.size)) != 0 ||
	    (rc = write_private(cpath, (const char *)c.data, c.size)) != 0) {
		errf(err, errlen, rc, "HTTPS: cannot write %s: %s", dir, strerror(-rc));
		goto out;
	}
	if ((*cert_pem = strndup((const char *)c.data, c.size)) == NULL ||
	    (*key_pem = strndup((const char *)k.data, k.size)) == NULL) {
		free(*cert_pem);
		*cert_pem = NULL;
		rc = errf(err, errlen, -ENOMEM, "HTTPS: out of memory%s%s", "", "");
		goto out;
	}
	snprintf(info, infolen, "HTTPS with a self-signed certificate made now: %s", cpath);
out:
	gnutls_free(c.data);
	if (k.data != NULL) {
		memset(k.data, 0, k.size);
		gnutls_free(k.data);
	}
	return rc;
}
