/* push.c - pushes for what ends before a scrape (docs/serve.md, "Pushes"): tacho stat's
 * counts to a Prometheus Pushgateway, tacho record's profile to Pyroscope's ingest API,
 * over the library's HTTP/1.1 client (plain http:// only). This file builds the URLs
 * and the bodies' framing and words the answers; the bodies are the library's
 * writers' (tacho_stat_write_metrics, tacho_profile_write_pprof / _folded). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "push.h"
#include "util/util.h"

#define PUSH_TIMEOUT_MS 10000

const char *const cli_push_stat_reserved[] = {
	"job", "event", "status", "reason", "cpu", "socket", "die", "core", "node", "pid",
	"tid", "comm", "cgroup", NULL,
};

static bool label_name_ok(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return !(n >= 2 && s[0] == '_' && s[1] == '_');   /* reserved by Prometheus */
}

int cli_push_label_add(struct cli_push *p, const struct cli_cmd *cmd, const char *arg,
		       const char *const *reserved)
{
	const char *eq = strchr(arg, '=');

	if (!eq || !label_name_ok(arg, (size_t)(eq - arg)))
		return cli_usage_error(cmd, "--push-label takes NAME=VALUE with a label name "
				       "of [a-zA-Z_][a-zA-Z0-9_]* (not starting with __), not '%s'",
				       arg);
	for (const char *const *r = reserved; r && *r; r++)
		if (strlen(*r) == (size_t)(eq - arg) && !strncmp(arg, *r, (size_t)(eq - arg)))
			return cli_usage_error(cmd, "--push-label %s: the label '%s' is %s",
					       arg, *r, !strcmp(*r, "job") ?
					       "the group's job (--push-job)" :
					       "one that tacho's metrics carry (a grouping label "
					       "would overwrite it)");
	if (p->nlabels == CLI_PUSH_MAX_LABELS)
		return cli_usage_error(cmd, "--push-label: at most %d labels",
				       CLI_PUSH_MAX_LABELS);
	p->labels[p->nlabels++] = arg;
	return 0;
}

/* The URL checked before anything runs: a bad one is a usage error. */
int cli_push_check(struct cli_push *p, const struct cli_cmd *cmd)
{
	const char *why;

	if (!p->url) {
		if (p->job || p->nlabels || p->name || p->format)
			return cli_usage_error(cmd, "--push-%s goes with --push <url>",
					       p->job ? "job" : p->name ? "name" :
					       p->format ? "format" : "label");
		return 0;
	}
	if (tc_http_url_parse(p->url, &p->u, &why))
		return cli_usage_error(cmd, "bad --push '%s': %s", p->url, why);
	if (!p->pyroscope)
		return 0;
	/* Pyroscope's NAME{k=v,...}: names and values cannot hold its syntax */
	if (p->name && (!*p->name || strpbrk(p->name, "{},= ")))
		return cli_usage_error(cmd, "bad --push-name '%s': Pyroscope's application "
				       "name cannot be empty or hold '{', '}', ',', '=' or a "
				       "space", p->name);
	for (size_t i = 0; i < p->nlabels; i++)
		if (strpbrk(strchr(p->labels[i], '=') + 1, "{},="))
			return cli_usage_error(cmd, "bad --push-label '%s': a Pyroscope label "
					       "value cannot hold '{', '}', ',' or '='",
					       p->labels[i]);
	return 0;
}

/* Percent-encodes s (RFC 3986: all but the unreserved characters). */
static void add_pct(struct tc_sb *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			tc_sb_addc(sb, (char)c);
		} else {
			tc_sb_addc(sb, '%');
			tc_sb_addc(sb, hex[c >> 4]);
			tc_sb_addc(sb, hex[c & 15]);
		}
	}
}

/* base64url with padding (RFC 4648 section 5), as the Pushgateway takes a value after
 * "@base64". */
static void add_base64url(struct tc_sb *sb, const char *s, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		tc_sb_addc(sb, b64[u[i] >> 2]);
		tc_sb_addc(sb, b64[(u[i] & 3) << 4 | u[i + 1] >> 4]);
		tc_sb_addc(sb, b64[(u[i + 1] & 15) << 2 | u[i + 2] >> 6]);
		tc_sb_addc(sb, b64[u[i + 2] & 63]);
	}
	if (n - i == 1) {
		tc_sb_addc(sb, b64[u[i] >> 2]);
		tc_sb_addc(sb, b64[(u[i] & 3) << 4]);
		tc_sb_adds(sb, "==");
	} else if (n - i == 2) {
		tc_sb_addc(sb, b64[u[i] >> 2]);
		tc_sb_addc(sb, b64[(u[i] & 3) << 4 | u[i + 1] >> 4]);
		tc_sb_addc(sb, b64[(u[i + 1] & 15) << 2]);
		tc_sb_addc(sb, '=');
	}
}

/* "/NAME/VALUE" of the grouping key: a value with a '/' (which the Pushgateway's
 * router would split) or an empty one goes as NAME@base64/BASE64URL, as its README
 * says; any other is percent-encoded. */
static void add_group_pair(struct tc_sb *sb, const char *name, size_t nn, const char *v)
{
	size_t n = strlen(v);

	tc_sb_addc(sb, '/');
	tc_sb_add(sb, name, nn);
	if (!n || memchr(v, '/', n)) {
		tc_sb_adds(sb, "@base64/");
		if (n)
			add_base64url(sb, v, n);
		else
			tc_sb_addc(sb, '=');
		return;
	}
	tc_sb_addc(sb, '/');
	add_pct(sb, v, n);
}

/* Sends and judges: EXIT_OK for a 2xx answer, else EXIT_FAIL with one line naming
 * the server's answer. */
static int send_push(const struct cli_push *p, const char *what, const char *method,
		     const char *target, const char *ctype, const void *body, size_t len)
{
	struct tc_http_request q = {
		.method = method, .url = &p->u, .target = target, .content_type = ctype,
		.body = body, .body_len = len, .timeout_ms = PUSH_TIMEOUT_MS,
	};
	struct tc_http_response r;
	char why[256];
	int err = tc_http_request(&q, &r, why, sizeof(why));

	if (err) {
		cli_error("cannot push %s to %s: %s", what, p->url, why);
		return EXIT_FAIL;
	}
	if (r.status < 200 || r.status > 299) {
		cli_error("cannot push %s to %s: the server answered %s %s%s%s", what, p->url,
			  method, r.status_line, r.body_line[0] ? ": " : "", r.body_line);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_push_stat(const struct cli_push *p, const struct tacho_stat *s)
{
	struct tc_sb target = TC_SB_INIT;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int err, ret = EXIT_FAIL;

	f = open_memstream(&body, &len);
	if (!f) {
		cli_error("cannot push the counts: out of memory");
		return EXIT_FAIL;
	}
	err = tacho_stat_write_metrics(s, f, TACHO_METRICS_PROMETHEUS);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		cli_error("cannot push the counts: %s", tacho_strerror(err));
		goto out;
	}
	tc_sb_init(&target);
	tc_sb_adds(&target, "/metrics");
	add_group_pair(&target, "job", 3, p->job ? p->job : "tacho");
	for (size_t i = 0; i < p->nlabels; i++) {
		const char *eq = strchr(p->labels[i], '=');
		add_group_pair(&target, p->labels[i], (size_t)(eq - p->labels[i]), eq + 1);
	}
	if (target.oom) {
		cli_error("cannot push the counts: out of memory");
		goto out;
	}
	/* PUT: the group holds this run's counts alone (POST would keep families of an
	 * earlier run that this one did not count) */
	ret = send_push(p, "the counts", "PUT", target.buf, "text/plain; version=0.0.4",
			body, len);
out:
	tc_sb_exit(&target);
	free(body);
	return ret;
}

/* Pyroscope's application name and labels: NAME{k=v,...} (checked by
 * cli_push_check). */
static void pyroscope_name(const struct cli_push *p, struct tc_sb *sb)
{
	tc_sb_adds(sb, p->name ? p->name : "tacho");
	if (!p->nlabels)
		return;
	tc_sb_addc(sb, '{');
	for (size_t i = 0; i < p->nlabels; i++) {
		if (i)
			tc_sb_addc(sb, ',');
		tc_sb_adds(sb, p->labels[i]);
	}
	tc_sb_addc(sb, '}');
}

int cli_push_profile(const struct cli_push *p, const char *recording, long long from,
		     long long until)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_profile_info info = { .sz = sizeof(info) };
	struct tacho_profile *prof = NULL;
	struct tc_sb name = TC_SB_INIT, target = TC_SB_INIT, body = TC_SB_INIT;
	bool folded = p->format && !strcmp(p->format, "folded");
	char *data = NULL, ctype[96];
	size_t len = 0;
	FILE *f;
	int err, ret = EXIT_FAIL;

	tc_sb_init(&name);
	tc_sb_init(&target);
	tc_sb_init(&body);
	pyroscope_name(p, &name);
	err = tacho_profile_load(recording, &prof, &diag);
	if (err) {
		cli_error("cannot push the profile: %s", diag.message[0] ? diag.message :
			  tacho_strerror(err));
		goto out;
	}
	tacho_profile_info(prof, &info);
	f = open_memstream(&data, &len);
	if (!f) {
		cli_error("cannot push the profile: out of memory");
		goto out;
	}
	err = folded ? tacho_profile_write_folded(prof, f) : tacho_profile_write_pprof(prof, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		cli_error("cannot push the profile: %s", tacho_strerror(err));
		goto out;
	}
	/* a profile of less than a second still spans one: Pyroscope's times are whole
	 * seconds */
	if (until <= from)
		until = from + 1;
	tc_sb_adds(&target, "/ingest?name=");
	add_pct(&target, name.buf, name.len);
	tc_sb_addf(&target, "&from=%lld&until=%lld&format=%s", from, until,
		   folded ? "folded" : "pprof");
	if (folded) {
		/* the folded counts are the events the samples stand for (their periods):
		 * for the clocks nanoseconds, which a sample rate of 1e9 makes seconds */
		bool clock = info.event && (!strcmp(info.event, "cpu-clock") ||
					    !strcmp(info.event, "task-clock"));
		tc_sb_addf(&target, "&units=samples&aggregationType=sum%s",
			   clock ? "&sampleRate=1000000000" : "");
		snprintf(ctype, sizeof(ctype), "text/plain");
		tc_sb_add(&body, data, len);
	} else {
		/* the form Pyroscope's API takes a pprof in: multipart/form-data, the
		 * profile in the part named "profile" (RFC 7578) */
		static const char boundary[] = "tacho-pprof-4b1d6f0e9a2c";
		snprintf(ctype, sizeof(ctype), "multipart/form-data; boundary=%s", boundary);
		tc_sb_addf(&body, "--%s\r\nContent-Disposition: form-data; name=\"profile\"; "
			   "filename=\"profile.pprof\"\r\nContent-Type: application/octet-stream"
			   "\r\n\r\n", boundary);
		tc_sb_add(&body, data, len);
		tc_sb_addf(&body, "\r\n--%s--\r\n", boundary);
	}
	if (target.oom || body.oom) {
		cli_error("cannot push the profile: out of memory");
		goto out;
	}
	ret = send_push(p, "the profile", "POST", target.buf, ctype, body.buf, body.len);
out:
	tacho_profile_free(prof);
	free(data);
	tc_sb_exit(&name);
	tc_sb_exit(&target);
	tc_sb_exit(&body);
	return ret;
}
