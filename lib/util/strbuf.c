/* strbuf.c - the growable, always NUL-terminated string used for all text building. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static char tc_sb_empty[1];

void tc_sb_init(struct tc_sb *sb)
{
	sb->buf = tc_sb_empty;
	sb->len = sb->alloc = 0;
	sb->oom = false;
}

void tc_sb_exit(struct tc_sb *sb)
{
	if (!sb)
		return;
	if (sb->alloc)
		free(sb->buf);
	tc_sb_init(sb);
}

void tc_sb_reset(struct tc_sb *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

/* Makes room for `extra` more bytes and the NUL. false when out of memory. */
static bool sb_grow(struct tc_sb *sb, size_t extra)
{
	size_t want, n;
	char *p;

	if (sb->oom)
		return false;
	if (!sb->buf)
		tc_sb_init(sb);
	if (extra > SIZE_MAX / 2 - sb->len) {
		sb->oom = true;
		return false;
	}
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return true;
	n = sb->alloc ? sb->alloc : 64;
	while (n < want)
		n *= 2;
	p = realloc(sb->alloc ? sb->buf : NULL, n);
	if (!p) {
		sb->oom = true;
		return false;
	}
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = n;
	return true;
}

void tc_sb_add(struct tc_sb *sb, const void *data, size_t len)
{
	if (!sb_grow(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void tc_sb_adds(struct tc_sb *sb, const char *s)
{
	tc_sb_add(sb, s, strlen(s));
}

void tc_sb_addc(struct tc_sb *sb, char c)
{
	tc_sb_add(sb, &c, 1);
}

void tc_sb_vaddf(struct tc_sb *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || !sb_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void tc_sb_addf(struct tc_sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tc_sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *tc_sb_detach(struct tc_sb *sb)
{
	char *s;

	if (sb->oom) {
		tc_sb_exit(sb);
		return NULL;
	}
	s = sb->alloc ? sb->buf : strdup("");
	tc_sb_init(sb);
	return s;
}
