/* buildid-cache.c - the build-id cache (docs/buildid-cache.md): copies of the binaries a
 * recording mapped, kept by build-id in DIR/.build-id/xx/rest/ (the file as "elf", the
 * path it had as "path"), so that a report still names the functions of a binary that
 * was rebuilt or removed since; looking copies up (tacho's cache, then perf's
 * ~/.debug); listing, removing and pruning (tacho buildid-cache). */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output/output.h"
#include "symbols/buildid-cache.h"
#include "symbols/symbols.h"
#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/symbols.h"

struct seen {
	char *path;
	uint8_t bid[TC_BUILD_ID_MAX];
	uint8_t len;
};

struct tc_bidcache {
	struct seen *v;
	size_t n, cap;
	struct tc_hmap idx;          /* hash of the build-id -> v */
};

/* One entry of the cache on disk. */
struct entry {
	char hex[2 * TC_BUILD_ID_MAX + 1];
	char *path;                  /* what the file was, or NULL */
	uint64_t bytes;
	time_t used;                 /* the copy's mtime: stored or last found useful */
};

/* snprintf's result: true when it all fit (a path that does not is skipped). */
static bool fits(int n, size_t size)
{
	return n >= 0 && (size_t)n < size;
}

static uint64_t bid_hash(const uint8_t *bid, unsigned len)
{
	uint64_t h = 0;

	for (unsigned i = 0; i < len; i++)
		h = h * 131 + bid[i];
	return tc_hash_u64(h ^ len);
}

int tc_bidcache_new(struct tc_bidcache **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	tc_hmap_init(&(*out)->idx);
	return 0;
}

void tc_bidcache_free(struct tc_bidcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	tc_hmap_exit(&c->idx);
	free(c);
}

void tc_bidcache_note(struct tc_bidcache *c, const char *path, const uint8_t *bid, unsigned len)
{
	uint64_t key;
	size_t pos = 0;
	uint32_t i;

	/* files only: not the vDSO, anonymous or deleted code, memfds, devices */
	if (!c || !len || len > TC_BUILD_ID_MAX || path[0] != '/' || strstr(path, " (deleted)") ||
	    tc_starts_with(path, "/memfd:") || tc_starts_with(path, "/dev/"))
		return;
	key = bid_hash(bid, len);
	while (tc_hmap_next(&c->idx, key, &pos, &i))
		if (c->v[i].len == len && !memcmp(c->v[i].bid, bid, len))
			return;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 32;
		struct seen *nv = realloc(c->v, nc * sizeof(*nv));
		if (!nv)
			return;   /* a copy fewer: the recording itself goes on */
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n].path = tc_strdup(path);
	if (!c->v[c->n].path)
		return;
	memcpy(c->v[c->n].bid, bid, len);
	c->v[c->n].len = (uint8_t)len;
	if (tc_hmap_add(&c->idx, key, (uint32_t)c->n)) {
		free(c->v[c->n].path);
		return;
	}
	c->n++;
}

int tacho_buildid_cache_dir(char *buf, size_t size)
{
	int err = tc_user_cache_dir(buf, size);

	/* under AT_SECURE there is no cache to use, as without a HOME */
	return err == -EPERM ? -ENOENT : err;
}

/* DIR/.build-id/xx/rest (the entry's folder) for a build-id in hex. */
static int entry_dir(const char *dir, const char *hex, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copies the open file in to a new file at path (through a temporary beside it). */
static int copy_file(int in, const char *path, mode_t mode)
{
	struct tc_outfile o;
	char buf[65536];
	ssize_t n;
	int err;

	err = tc_outfile_open(&o, path, 0);
	if (err)
		return err;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if ((err = write_all(o.fd, buf, (size_t)n)))
			break;
	if (n < 0)
		err = -errno;
	if (err) {
		tc_outfile_abort(&o);
		return err;
	}
	fchmod(o.fd, mode);
	return tc_outfile_commit(&o);
}

static int write_text(const char *path, const char *text)
{
	struct tc_outfile o;
	int err = tc_outfile_open(&o, path, 0);

	if (err)
		return err;
	err = write_all(o.fd, text, strlen(text));
	if (!err)
		err = write_all(o.fd, "\n", 1);
	if (err) {
		tc_outfile_abort(&o);
		return err;
	}
	return tc_outfile_commit(&o);
}

static void free_entries(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].path);
	free(e);
}

/* Every entry of the cache at dir (none when it does not exist). 0 or -errno. */
static int list_entries(const char *dir, struct entry **out, size_t *nout)
{
	char top[4096], sub[4200], file[4400];
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d, *d2;
	struct dirent *a, *b;

	*out = NULL;
	*nout = 0;
	if (!fits(snprintf(top, sizeof(top), "%s/.build-id", dir), sizeof(top)))
		return -ENAMETOOLONG;
	d = opendir(top);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((a = readdir(d))) {
		if (strlen(a->d_name) != 2 || !isxdigit((unsigned char)a->d_name[0]))
			continue;
		if (!fits(snprintf(sub, sizeof(sub), "%s/%s", top, a->d_name), sizeof(sub)))
			continue;
		d2 = opendir(sub);
		if (!d2)
			continue;
		while ((b = readdir(d2))) {
			struct stat st;
			char *text = NULL;
			size_t len;
			if (b->d_name[0] == '.' || strlen(b->d_name) > 2 * TC_BUILD_ID_MAX - 2)
				continue;
			if (!fits(snprintf(file, sizeof(file), "%s/%s/elf", sub, b->d_name),
				  sizeof(file)) || stat(file, &st) || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct entry *nv = realloc(v, nc * sizeof(*nv));
				if (!nv) {
					closedir(d2);
					closedir(d);
					free_entries(v, n);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			memset(&v[n], 0, sizeof(v[n]));
			/* the lengths were checked: 2 + at most 38 hex digits */
			if (!fits(snprintf(v[n].hex, sizeof(v[n].hex), "%s%s", a->d_name,
					   b->d_name), sizeof(v[n].hex)))
				continue;
			v[n].bytes = (uint64_t)st.st_size;
			v[n].used = st.st_mtime;
			if (fits(snprintf(file, sizeof(file), "%s/%s/path", sub, b->d_name),
				 sizeof(file)) && tc_read_file(file, &text, &len, 4096) == 0) {
				text[strcspn(text, "\n")] = '\0';
				v[n].path = text;
			}
			n++;
		}
		closedir(d2);
	}
	closedir(d);
	*out = v;
	*nout = n;
	return 0;
}

static int remove_entry(const char *dir, const char *hex)
{
	char e[4096], f[4200];
	int err;

	err = entry_dir(dir, hex, e, sizeof(e));
	if (err)
		return err;
	if (!fits(snprintf(f, sizeof(f), "%s/elf", e), sizeof(f)))
		return -ENAMETOOLONG;
	if (unlink(f) && errno != ENOENT)
		return -errno;
	if (fits(snprintf(f, sizeof(f), "%s/path", e), sizeof(f)))
		unlink(f);
	/* the source lines and inlined functions decoded from it (tc_symdso_line,
	 * tc_symdso_inlines) */
	if (fits(snprintf(f, sizeof(f), "%s/lines", e), sizeof(f)))
		unlink(f);
	if (fits(snprintf(f, sizeof(f), "%s/inlines", e), sizeof(f)))
		unlink(f);
	rmdir(e);
	/* the xx folder goes when it is empty */
	*strrchr(e, '/') = '\0';
	rmdir(e);
	return 0;
}

static uint64_t total_bytes(const struct entry *e, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += e[i].bytes;
	return t;
}

int tc_bidcache_store(struct tc_bidcache *c, const char *dir,
		      void (*say)(void *arg, const char *fmt, ...), void *arg,
		      unsigned *files, uint64_t *bytes)
{
	struct entry *have = NULL;
	size_t nhave = 0;
	uint64_t total;
	bool full = false;
	int err;

	*files = 0;
	*bytes = 0;
	if (!c || !c->n)
		return 0;
	err = list_entries(dir, &have, &nhave);
	if (err)
		return err;
	total = total_bytes(have, nhave);
	free_entries(have, nhave);
	for (size_t i = 0; i < c->n; i++) {
		const struct seen *s = &c->v[i];
		char hex[2 * TC_BUILD_ID_MAX + 1], e[4096], f[4200], size[32];
		uint8_t now[TC_BUILD_ID_MAX];
		struct stat st;
		int fd, n;

		tc_hex_encode(s->bid, s->len, hex, sizeof(hex));
		if (entry_dir(dir, hex, e, sizeof(e)) ||
		    !fits(snprintf(f, sizeof(f), "%s/elf", e), sizeof(f)))
			continue;
		if (stat(f, &st) == 0) {
			utimensat(AT_FDCWD, f, NULL, 0);   /* used again: pruned last */
			continue;
		}
		/* a regular file, its type read before it is opened (util.h) */
		fd = tc_open_regular(s->path, &st);
		if (fd < 0)
			continue;
		if ((uint64_t)st.st_size > TC_BIDCACHE_FILE_MAX) {
			say(arg, "not copied into the build-id cache: %s (%s, over the %u MiB a "
			    "file may take)", s->path, tc_fmt_size((uint64_t)st.st_size, size,
								  sizeof(size)),
			    (unsigned)(TC_BIDCACHE_FILE_MAX >> 20));
			close(fd);
			continue;
		}
		if (total + (uint64_t)st.st_size > TC_BIDCACHE_MAX) {
			if (!full)
				say(arg, "the build-id cache in %s holds %s, near its %u MiB: no more "
				    "copies ('tacho buildid-cache --max-size' prunes it)", dir,
				    tc_fmt_size(total, size, sizeof(size)),
				    (unsigned)(TC_BIDCACHE_MAX >> 20));
			full = true;
			close(fd);
			continue;
		}
		/* the file must still be the one mapped: it may have been rebuilt since */
		n = tc_build_id_of_file(s->path, now, sizeof(now));
		if (n != s->len || memcmp(now, s->bid, s->len)) {
			close(fd);
			continue;
		}
		err = tc_mkdirs(e);
		if (!err)
			err = copy_file(fd, f, 0600);
		close(fd);
		if (!err) {
			err = fits(snprintf(f, sizeof(f), "%s/path", e), sizeof(f)) ?
			      write_text(f, s->path) : -ENAMETOOLONG;
		}
		if (err) {
			say(arg, "cannot copy %s into the build-id cache in %s: %s", s->path, dir,
			    tacho_strerror(err));
			remove_entry(dir, hex);
			return err;
		}
		total += (uint64_t)st.st_size;
		(*files)++;
		*bytes += (uint64_t)st.st_size;
	}
	return 0;
}

int tc_bidcache_entry_dir(const uint8_t *bid, size_t len, char *buf, size_t size)
{
	char hex[2 * TC_BUILD_ID_MAX + 1], dir[4096];
	int err;

	if (!len || len > TC_BUILD_ID_MAX)
		return -ENOENT;
	err = tacho_buildid_cache_dir(dir, sizeof(dir));
	if (err)
		return err;
	tc_hex_encode(bid, len, hex, sizeof(hex));
	return entry_dir(dir, hex, buf, size);
}

int tc_bidcache_lookup(const uint8_t *bid, unsigned len, char *buf, size_t size)
{
	char hex[2 * TC_BUILD_ID_MAX + 1], dir[4096];
	const char *home = tc_env_trusted("HOME", NULL);
	struct stat st;

	if (!len || len > TC_BUILD_ID_MAX)
		return -ENOENT;
	tc_hex_encode(bid, len, hex, sizeof(hex));
	/* tacho's own cache */
	if (tacho_buildid_cache_dir(dir, sizeof(dir)) == 0) {
		if (fits(snprintf(buf, size, "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2), size) &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	/* perf's (perf buildid-cache, perf record): .build-id/xx/rest links to the folder
	 * of the file's copy, which holds it as "elf" */
	if (home && home[0] == '/') {
		if (fits(snprintf(buf, size, "%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2),
			 size) && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	return -ENOENT;
}

/* --- the command's calls --- */

static int cmp_used(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return strcmp(x->hex, y->hex);
}

int tacho_buildid_cache_prune(const char *dir, uint64_t max_bytes, unsigned *removed,
			      uint64_t *freed, struct tacho_diag *diag)
{
	struct entry *v;
	size_t n;
	uint64_t total;
	int err;

	if (tc_diag_check(diag) || !dir)
		return -EINVAL;
	if (removed)
		*removed = 0;
	if (freed)
		*freed = 0;
	err = list_entries(dir, &v, &n);
	if (err)
		return tc_diag_set(diag, dir, 0, 0, err, "cannot read the build-id cache in %s: %s",
				   dir, tacho_strerror(err));
	/* the least recently used go first */
	if (n)
		qsort(v, n, sizeof(*v), cmp_used);
	total = total_bytes(v, n);
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		err = remove_entry(dir, v[i].hex);
		if (err) {
			tc_diag_set(diag, dir, 0, 0, err, "cannot remove %s from the build-id cache: "
				    "%s", v[i].hex, tacho_strerror(err));
			break;
		}
		total -= v[i].bytes;
		if (removed)
			(*removed)++;
		if (freed)
			*freed += v[i].bytes;
	}
	free_entries(v, n);
	/* emptied: the report's copy of the kernel's symbols goes too */
	if (!err && !max_bytes)
		tc_kallsyms_cache_forget(dir, NULL);
	return err;
}

int tacho_buildid_cache_remove(const char *dir, const char *what, unsigned *removed,
			       struct tacho_diag *diag)
{
	struct entry *v;
	size_t n, wl;
	unsigned done = 0;
	bool by_id;
	int err;

	if (tc_diag_check(diag) || !dir || !what || !*what)
		return -EINVAL;
	if (removed)
		*removed = 0;
	err = list_entries(dir, &v, &n);
	if (err)
		return tc_diag_set(diag, dir, 0, 0, err, "cannot read the build-id cache in %s: %s",
				   dir, tacho_strerror(err));
	/* a path starts with '/'; else a build-id, whole or its first 8 digits or more */
	wl = strlen(what);
	by_id = what[0] != '/';
	if (by_id && (wl < 8 || strspn(what, "0123456789abcdefABCDEF") != wl)) {
		free_entries(v, n);
		return tc_diag_set(diag, what, 0, 0, -EINVAL, "'%s' is neither a path (it starts "
				   "with /) nor a build-id (8 to 40 hex digits)", what);
	}
	for (size_t i = 0; i < n && !err; i++) {
		bool match = by_id ? !strncasecmp(v[i].hex, what, wl) :
				     v[i].path && !strcmp(v[i].path, what);
		if (!match)
			continue;
		err = remove_entry(dir, v[i].hex);
		if (err)
			tc_diag_set(diag, dir, 0, 0, err, "cannot remove %s from the build-id cache: "
				    "%s", v[i].hex, tacho_strerror(err));
		else
			done++;
	}
	free_entries(v, n);
	if (removed)
		*removed = done;
	if (!err && !done)
		err = tc_diag_set(diag, what, 0, 0, -ENOENT, "nothing in the build-id cache in %s "
				  "is %s", dir, what);
	return err;
}

static int cmp_hex(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->hex, ((const struct entry *)b)->hex);
}

int tacho_buildid_cache_write(const char *dir, FILE *f, enum tacho_format fmt,
			      const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	struct entry *v;
	size_t n;
	char size[32], when[32];
	int err;

	if (!dir || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	err = list_entries(dir, &v, &n);
	if (err)
		return err;
	if (n)
		qsort(v, n, sizeof(*v), cmp_hex);
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES: {
		struct tc_json j;
		tc_json_doc_begin(&j, f, fmt, &w);
		tc_json_obj_begin(&j, NULL);
		tc_json_int(&j, "version", 1);
		tc_json_str(&j, "dir", dir);
		tc_json_uint(&j, "bytes", total_bytes(v, n));
		tc_json_arr_begin(&j, "entries");
		for (size_t i = 0; i < n; i++) {
			tc_json_obj_begin(&j, NULL);
			tc_json_str(&j, "build_id", v[i].hex);
			tc_json_str(&j, "path", v[i].path);
			tc_json_uint(&j, "bytes", v[i].bytes);
			tc_json_int(&j, "used", (int64_t)v[i].used);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
		err = tc_json_doc_end(&j);
		break;
	}
	case TACHO_FORMAT_CSV: {
		static const char *const head[] = { "build_id", "path", "bytes", "used" };
		if (w.header)
			tc_csv_row(f, &w, head, ARRAY_SIZE(head));
		for (size_t i = 0; i < n; i++) {
			char b[24], u[24];
			const char *row[] = { v[i].hex, v[i].path ? v[i].path : "", b, u };
			snprintf(b, sizeof(b), "%" PRIu64, v[i].bytes);
			snprintf(u, sizeof(u), "%lld", (long long)v[i].used);
			tc_csv_row(f, &w, row, ARRAY_SIZE(row));
		}
		err = tc_write_status(f);
		break;
	}
	default: {
		struct tc_table *t = tc_table_new(4);
		if (!t) {
			err = -ENOMEM;
			break;
		}
		fprintf(f, "# %zu binar%s, %s in %s\n", n, n == 1 ? "y" : "ies",
			tc_fmt_size(total_bytes(v, n), size, sizeof(size)), dir);
		tc_table_align_right(t, 1, true);
		err = tc_table_add(t, (const char *const[]){ "build-id", "size", "used", "path" });
		for (size_t i = 0; i < n && !err; i++) {
			struct tm tm;
			char sz[32];
			localtime_r(&v[i].used, &tm);
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
			err = tc_table_add(t, (const char *const[]){
				v[i].hex, tc_fmt_size(v[i].bytes, sz, sizeof(sz)), when,
				v[i].path ? v[i].path : "?" });
		}
		if (!err && n)
			tc_table_print(t, f, 0, 2);
		tc_table_free(t);
		if (!err)
			err = tc_write_status(f);
		break;
	}
	}
	free_entries(v, n);
	return err;
}

int tc_bidcache_map_file(int fd, size_t min, void **map, size_t *len, const char **why)
{
	struct stat st;
	void *m;

	*why = NULL;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return -TACHO_EPARSE;
	}
	if ((uint64_t)st.st_size < min || (uint64_t)st.st_size > SIZE_MAX / 2) {
		*why = "a size no cache file of its kind has";
		return -TACHO_EPARSE;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	*map = m;
	*len = (size_t)st.st_size;
	return 0;
}
