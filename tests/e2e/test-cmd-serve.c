/* test-cmd-serve.c - `tacho serve` with real peers: a real Prometheus (loopback, a
 * temporary data folder, 1 s scrapes) scrapes it and its HTTP API finds the counter,
 * which a program's exactly N writes raise by exactly N; VictoriaMetrics scraping it
 * too, the writes exact in its query API; the page in headless Chromium (no console
 * message, new points arriving): those three at once, each against a server of its
 * own; `promtool check metrics` on /metrics; OpenMetrics on request; 20 clients at once
 * for 10 s and two that stall, while counting goes on and memory stays bounded; 100
 * clients that send a header line every 2 s to one server and 100 that send nothing to
 * another, at once, and every scrape of a real Prometheus beside them succeeds within
 * its timeout; --listen :PORT on IPv6 and IPv4 with a warning, [::1] without; a port
 * in use and bad addresses. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "spawn.h"

static bool have(const char *prog)
{
	char *argv[] = { (char *)"sh", (char *)"-c", NULL, NULL };
	char cmd[256];
	struct th_run r;
	bool ok;

	snprintf(cmd, sizeof(cmd), "command -v %s", prog);
	argv[2] = cmd;
	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	th_run_free(&r);
	return ok;
}

/* tacho serve on a free loopback port with these arguments; waits until it answers. */
static int start_serve(struct th_proc *p, const char *tag, const char *a1, const char *a2,
		       const char *a3, const char *a4, const char *a5, const char *a6)
{
	int port = th_free_port();
	char listen[32];
	char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", listen,
			 (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5, (char *)a6,
			 NULL };

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	th_spawn_ready(p, tag, argv, port, "/api/frame", "tacho serve");
	return port;
}

/* --- a real Prometheus --- */

/* Prometheus (tag names its files) scraping 127.0.0.1:port every interval with that
 * timeout; the port of its own HTTP API. */
static int start_prometheus(struct th_proc *prom, const char *tag, int port,
			    const char *interval, const char *timeout)
{
	char cfg[4096], cfgarg[4200], data[4200], listen[64], name[256];
	char *argv[] = { (char *)"prometheus", cfgarg, data, listen, NULL };
	int pport = th_free_port();
	FILE *f;

	snprintf(name, sizeof(name), "%s.yml", tag);
	snprintf(cfg, sizeof(cfg), "%s", th_tmp(name));
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n"
		   "  evaluation_interval: 1s\n"
		   "scrape_configs:\n  - job_name: tacho\n    static_configs:\n"
		   "      - targets: ['127.0.0.1:%d']\n", interval, timeout, port);
	fclose(f);
	snprintf(name, sizeof(name), "%s-tsdb", tag);
	snprintf(data, sizeof(data), "--storage.tsdb.path=%s", th_tmp(name));
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", pport);
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	th_spawn(prom, tag, argv);
	return pport;
}

/* promtool's lint of the Prometheus text; OpenMetrics on request. */
static void test_promtool_openmetrics(void **state)
{
	struct th_proc serve;
	struct th_run r;
	char *body = NULL;
	int port;
	(void)state;

	port = start_serve(&serve, "serve2", "-d", "0.2", "--view", "cpu", NULL, NULL);
	usleep(500000);
	assert_int_equal(th_http_get(port, "/metrics", NULL, &body), 200);
	assert_contains(body, "# TYPE tacho_task_clock_seconds_total counter\n");
	assert_contains(body, "tacho_task_clock_seconds_total{event=\"task-clock\",cpu=\"0\"} ");
	assert_contains(body, "tacho_scrapes_total ");
	assert_not_contains(body, "# EOF");
	if (have("promtool")) {
		char *argv[] = { (char *)"promtool", (char *)"check", (char *)"metrics", NULL };
		th_runv(&r, body, argv);
		if (r.status != 0)
			fail_msg("promtool check metrics: %s%s\n%s", r.out, r.err, body);
		th_run_free(&r);
	}
	free(body);
	assert_int_equal(th_http_get(port, "/metrics", "application/openmetrics-text; "
				     "version=1.0.0", &body), 200);
	assert_contains(body, "# TYPE tacho_task_clock_seconds counter\n# UNIT "
			      "tacho_task_clock_seconds seconds\n");
	assert_true(strlen(body) > 6 && !strcmp(body + strlen(body) - 6, "# EOF\n"));
	free(body);
	assert_int_equal(th_http_get(port, "/nothing", NULL, &body), 404);
	free(body);
	assert_int_equal(th_http_get(port, "/api/history", NULL, &body), 200);
	{
		struct th_json *j = assert_json(body);
		assert_json_str(j, "view", "cpu");
		assert_json_type(j, "rows[0].history", TH_JSON_OBJECT);
		th_json_free(j);
	}
	free(body);
	if (!have("promtool")) {
		th_proc_end(&serve);
		TEST_SKIP("promtool is not installed (the rest was checked)");
	}
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 10));
	assert_int_equal(serve.status, 0);
}

/* The three peers run at once, each against a tacho serve of its own, in the time of
 * the longest: each starts (VictoriaMetrics, then the page in Chromium, which runs
 * until its virtual time is spent), Prometheus's checks run, then VictoriaMetrics' and
 * the page's. What each checks is its own, as when they ran one after another; a peer
 * that is not installed is said, and the others are checked. */

/* Prometheus: the series appears with the counter at 0; exactly 1234 writes raise it by
 * exactly 1234 at the next scrapes, it stays there, and 1234 more make 2468. NULL, or
 * why it was not checked. */
static const char *prometheus_check(void)
{
	char *burst[] = { (char *)th_prog("live-helper"), (char *)"burst", (char *)"1234", NULL };
	struct th_proc helper, serve, prom;
	char pid[32], q[256];
	int port, pport;
	double v0 = NAN, v, end;
	const char *why;

	if (!th_source_exact(TACHO_SOURCE_TRACEPOINT, &why))
		return why;
	if (!have("prometheus"))
		return "prometheus is not installed";
	if (!th_have_write_tracepoint())
		return "tracefs with syscalls:sys_enter_write is not there: Prometheus was not tried";
	th_spawn(&helper, "burst", burst);
	snprintf(pid, sizeof(pid), "%d", (int)helper.pid);
	port = start_serve(&serve, "serve", "-d", "0.2", "-e", "syscalls:sys_enter_write", "-p",
			   pid);
	pport = start_prometheus(&prom, "prometheus", port, "1s", "1s");
	/* the series appears once Prometheus has scraped tacho */
	snprintf(q, sizeof(q), "tacho_syscalls_sys_enter_write_total%%7Bpid%%3D%%22%s%%22%%7D",
		 pid);
	end = th_now() + 30;
	while (isnan(v0) && th_now() < end) {
		v0 = th_prom_query(pport, q);
		if (isnan(v0))
			usleep(200000);
	}
	if (isnan(v0)) {
		char *log = th_slurp(prom.err);
		fail_msg("Prometheus never had the counter; its log:\n%s", log);
	}
	assert_true(v0 == 0);            /* the helper has not written yet */
	assert_true(th_prom_query(pport, "tacho_rows") == 1);
	assert_true(th_prom_query(pport, "up%7Bjob%3D%22tacho%22%7D") == 1);
	/* exactly 1234 writes: the counter says so at the next scrapes */
	kill(helper.pid, SIGUSR1);
	v = v0;
	end = th_now() + 20;
	while (v == v0 && th_now() < end) {
		usleep(200000);
		v = th_prom_query(pport, q);
	}
	if (v - v0 != 1234)
		fail_msg("the counter went from %g to %g, not by 1234", v0, v);
	/* and stays there */
	usleep(2500000);
	assert_true(th_prom_query(pport, q) == v0 + 1234);
	kill(helper.pid, SIGUSR1);
	end = th_now() + 20;
	while ((v = th_prom_query(pport, q)) != v0 + 2468 && th_now() < end)
		usleep(200000);
	assert_true(v == v0 + 2468);
	th_proc_kill(&prom, SIGTERM);
	assert_true(th_proc_wait(&prom, 20));
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 10));
	assert_int_equal(serve.status, 0);
	th_proc_end(&helper);
	return NULL;
}

/* VictoriaMetrics (Debian's victoria-metrics, the single-node server) scraping serve
 * with its Prometheus-compatible scraper (-promscrape.config, 1 s), finding the counter
 * through its Prometheus-compatible query API and the writes exactly. */
struct vm_peer {
	const char *skip;        /* why it was not started, or NULL */
	struct th_proc helper, serve, vm;
	char cfg[4096], cfgarg[4200], data[4200], listen[64], pid[32], q[256];
	int vport;
};

static void vm_start(struct vm_peer *p)
{
	char *burst[] = { (char *)th_prog("live-helper"), (char *)"burst", (char *)"1234", NULL };
	char *vm_argv[] = { (char *)"victoria-metrics", p->cfgarg, p->data, p->listen,
			    (char *)"-search.latencyOffset=0s", (char *)"-search.disableCache",
			    NULL };
	const char *why;
	int port;
	FILE *f;

	p->vport = th_free_port();
	if (!th_source_exact(TACHO_SOURCE_TRACEPOINT, &why)) {
		p->skip = why;
		return;
	}
	if (!have("victoria-metrics")) {
		p->skip = "victoria-metrics is not installed";
		return;
	}
	if (!th_have_write_tracepoint()) {
		p->skip = "tracefs with syscalls:sys_enter_write is not there: VictoriaMetrics "
			  "was not tried";
		return;
	}
	th_spawn(&p->helper, "vm-burst", burst);
	snprintf(p->pid, sizeof(p->pid), "%d", (int)p->helper.pid);
	port = start_serve(&p->serve, "vm-serve", "-d", "0.2", "-e", "syscalls:sys_enter_write",
			   "-p", p->pid);
	snprintf(p->cfg, sizeof(p->cfg), "%s", th_tmp("vm-scrape.yml"));
	f = fopen(p->cfg, "w");
	assert_non_null(f);
	fprintf(f, "scrape_configs:\n  - job_name: tacho\n    scrape_interval: 1s\n"
		   "    static_configs:\n      - targets: ['127.0.0.1:%d']\n", port);
	fclose(f);
	snprintf(p->cfgarg, sizeof(p->cfgarg), "-promscrape.config=%s", p->cfg);
	snprintf(p->data, sizeof(p->data), "-storageDataPath=%s", th_tmp("vm-data"));
	snprintf(p->listen, sizeof(p->listen), "-httpListenAddr=127.0.0.1:%d", p->vport);
	th_spawn(&p->vm, "victoria-metrics", vm_argv);
	snprintf(p->q, sizeof(p->q), "tacho_syscalls_sys_enter_write_total%%7Bpid%%3D%%22%s%%22,"
		 "job%%3D%%22tacho%%22%%7D", p->pid);
}

static void vm_check(struct vm_peer *p)
{
	double v0 = NAN, v = NAN, end;

	if (p->skip)
		return;
	end = th_now() + 30;
	while (isnan(v0) && th_now() < end) {
		v0 = th_prom_query(p->vport, p->q);
		if (isnan(v0))
			usleep(100000);
	}
	if (isnan(v0)) {
		char *log = th_slurp(p->vm.err);
		fail_msg("VictoriaMetrics never had the counter; its log:\n%s", log);
	}
	assert_true(v0 == 0);            /* the helper has not written yet */
	kill(p->helper.pid, SIGUSR1);
	end = th_now() + 20;
	while ((v = th_prom_query(p->vport, p->q)) != v0 + 1234 && th_now() < end)
		usleep(100000);
	if (v != v0 + 1234)
		fail_msg("VictoriaMetrics has the counter at %g, not %g", v, v0 + 1234);
	th_proc_kill(&p->vm, SIGTERM);
	assert_true(th_proc_wait(&p->vm, 20));
	th_proc_kill(&p->serve, SIGTERM);
	assert_true(th_proc_wait(&p->serve, 10));
	assert_int_equal(p->serve.status, 0);
	th_proc_end(&p->helper);
}

/* The page in headless Chromium: new frames and points arrive, no error is shown and no
 * console message is logged. */
struct page_peer {
	const char *skip;
	struct th_proc serve, chr;
	char url[64];
};

static void page_start(struct page_peer *p)
{
	int port;

	if (!have("chromium")) {
		p->skip = "chromium is not installed";
		return;
	}
	port = start_serve(&p->serve, "serve3", "-d", "0.1", NULL, NULL, NULL, NULL);
	snprintf(p->url, sizeof(p->url), "http://127.0.0.1:%d/", port);
	{
		/* virtual time runs the page's timers at once; each poll is a real request,
		 * so new frames arrive as real time passes */
		char *argv[] = { (char *)"chromium", (char *)"--headless", (char *)"--no-sandbox",
				 (char *)"--disable-gpu", (char *)"--enable-logging=stderr",
				 (char *)"--v=0", (char *)"--virtual-time-budget=60000",
				 (char *)"--dump-dom", p->url, NULL };
		th_spawn(&p->chr, "chromium", argv);
	}
}

static void page_check(struct page_peer *p)
{
	char *dom, *log, *s;
	int frames = 0, points = 0;

	if (p->skip)
		return;
	if (!th_proc_wait(&p->chr, 120)) {
		th_proc_end(&p->chr);
		fail_msg("chromium did not finish");
	}
	assert_int_equal(p->chr.status, 0);
	dom = th_slurp(p->chr.out);
	log = th_slurp(p->chr.err);
	s = strstr(dom, "data-frames=\"");
	assert_non_null(s);
	frames = atoi(s + 13);
	s = strstr(dom, "data-points=\"");
	assert_non_null(s);
	points = atoi(s + 13);
	if (frames < 3 || points <= 0)
		fail_msg("the page got %d frames and %d points:\n%s", frames, points, dom);
	assert_contains(dom, "<div id=\"errors\"></div>");
	assert_contains(dom, "<canvas");
	/* the browser logs every console message as CONSOLE: there is none */
	if (strstr(log, ":CONSOLE"))
		fail_msg("console messages:\n%s", log);
	free(dom);
	free(log);
	th_proc_kill(&p->serve, SIGTERM);
	assert_true(th_proc_wait(&p->serve, 10));
	assert_int_equal(p->serve.status, 0);
}

static void test_prometheus_vm_page(void **state)
{
	struct vm_peer vm = { 0 };
	struct page_peer page = { 0 };
	const char *prom_skip;
	(void)state;

	vm_start(&vm);
	page_start(&page);
	prom_skip = prometheus_check();
	vm_check(&vm);
	page_check(&page);
	if (prom_skip || vm.skip || page.skip)
		TEST_SKIP("%s%s%s%s%s (the rest was checked)", prom_skip ? prom_skip : "",
			  prom_skip && (vm.skip || page.skip) ? "; " : "", vm.skip ? vm.skip : "",
			  vm.skip && page.skip ? "; " : "", page.skip ? page.skip : "");
}

/* --- many clients --- */

struct client {
	int port;
	double until;
	unsigned ok, bad;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	static const char *const paths[] = { "/metrics", "/api/frame", "/api/history", "/" };

	/* bounded in time and in count, a request every 5 ms or so each: 4000 a second
	 * in all, and the suite's other jobs still get the machine */
	for (unsigned i = 0; th_now() < c->until && i < 2000; i++) {
		char *body = NULL;
		int code = th_http_get(c->port, paths[i % 4], NULL, &body);
		if (code == 200 && body && *body)
			c->ok++;
		else
			c->bad++;
		free(body);
		usleep(5000);
	}
	return NULL;
}

static long rss_kib(pid_t pid)
{
	char path[64], *s, *p;
	long kib = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = th_slurp(path);
	p = strstr(s, "VmRSS:");
	if (p)
		kib = strtol(p + 6, NULL, 10);
	free(s);
	return kib;
}

static double frame_time(int port)
{
	char *body = NULL;
	struct th_json *j;
	double t;

	assert_int_equal(th_http_get(port, "/api/frame", NULL, &body), 200);
	j = assert_json(body);
	t = json_num(j, "time");
	th_json_free(j);
	free(body);
	return t;
}

/* Two clients that connect and stall (one sends half a request, one never reads) and
 * twenty that ask as fast as they can for 10 s: every request is answered, counting
 * goes on (new frames keep coming at the interval), and memory stays within bounds. */
static void test_many_clients(void **state)
{
	struct client c[20];
	pthread_t th[20];
	struct th_proc serve;
	int port, stall[2];
	long rss0, rss1;
	double t0, t1, wall0, wall1;
	unsigned ok = 0, bad = 0;
	(void)state;

	{
		/* under ASan, what is freed waits in a quarantine of up to 256 MiB before
		 * its memory is reused, which would read as growth: a small one for tacho,
		 * so that the RSS says what tacho keeps (a release build ignores it) */
		const char *asan = getenv("ASAN_OPTIONS");
		char *saved = asan ? strdup(asan) : NULL, opts[1024];

		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=1", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		port = start_serve(&serve, "serve4", "-d", "0.2", "--view", "cpu", NULL, NULL);
		if (saved)
			setenv("ASAN_OPTIONS", saved, 1);
		else
			unsetenv("ASAN_OPTIONS");
		free(saved);
	}
	usleep(600000);
	rss0 = rss_kib(serve.pid);
	for (int i = 0; i < 2; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		stall[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(stall[i], (struct sockaddr *)&a, sizeof(a)), 0);
		if (i == 0)
			assert_int_equal(write(stall[i], "GET /met", 8), 8);
		else
			assert_int_equal(write(stall[i], "GET /api/history HTTP/1.0\r\n\r\n", 29), 29);
	}
	t0 = frame_time(port);
	wall0 = th_now();
	for (int i = 0; i < 20; i++) {
		c[i] = (struct client){ .port = port, .until = th_now() + 10 };
		assert_int_equal(pthread_create(&th[i], NULL, client_main, &c[i]), 0);
	}
	for (int i = 0; i < 20; i++) {
		pthread_join(th[i], NULL);
		ok += c[i].ok;
		bad += c[i].bad;
	}
	t1 = frame_time(port);
	wall1 = th_now();
	rss1 = rss_kib(serve.pid);
	print_message("20 clients, 10 s: %u answers, %u failures; frames advanced %.2f s in "
		      "%.2f s; RSS %ld -> %ld KiB\n", ok, bad, t1 - t0, wall1 - wall0, rss0, rss1);
	assert_int_equal(bad, 0);
	assert_true(ok > 20);
	/* counting was never held up by the clients: the frames kept up with the clock
	 * (an interval of slack for the frame in flight at each end) */
	assert_true(t1 - t0 >= (wall1 - wall0) - 0.5);
	/* what twenty clients cost stays bounded: no growth with the number of answers */
	assert_true(rss1 - rss0 < 16 * 1024);
	close(stall[0]);
	close(stall[1]);
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 15));
	assert_int_equal(serve.status, 0);
}

/* --- clients that hold connections and never finish a request --- */

/* Each thread holds one connection from 127.0.0.<first + its number % naddr>: a slow
 * one sends a request line, then a header line every 2 s and never the end of its
 * headers; an idle one sends nothing. When the server cuts it, it connects again half a
 * second later. */
struct holders {
	int port, first, naddr;
	bool slow;
	atomic_bool stop;
	atomic_uint connects, cuts;
};

struct holder {
	struct holders *h;
	int n;
};

/* A connection to 127.0.0.1:port from 127.0.0.<last>, or -1 (within a second). */
static int connect_from(int port, int last)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct pollfd p;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
	socklen_t el = sizeof(e);

	if (s < 0)
		return -1;
	src.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)last);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons((uint16_t)port);
	if (bind(s, (struct sockaddr *)&src, sizeof(src)) ||
	    (connect(s, (struct sockaddr *)&dst, sizeof(dst)) && errno != EINPROGRESS)) {
		close(s);
		return -1;
	}
	p = (struct pollfd){ .fd = s, .events = POLLOUT };
	if (poll(&p, 1, 1000) != 1 || getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) || e) {
		close(s);
		return -1;
	}
	return s;
}

static void *holder_main(void *arg)
{
	struct holder *me = arg;
	struct holders *h = me->h;
	static const char line[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";

	while (!atomic_load(&h->stop)) {
		int s = connect_from(h->port, h->first + me->n % h->naddr), k = 0;

		if (s < 0) {
			usleep(100000);
			continue;
		}
		atomic_fetch_add(&h->connects, 1);
		if (h->slow && send(s, line, sizeof(line) - 1, MSG_NOSIGNAL) < 0)
			goto out_cut;
		while (!atomic_load(&h->stop)) {
			struct pollfd p = { .fd = s, .events = POLLIN };
			char buf[256];

			/* a header line every 2 s (4 x 0.5 s), the stop seen within 0.5 s */
			if (poll(&p, 1, 500) == 1 && read(s, buf, sizeof(buf)) <= 0)
				goto out_cut;
			if (h->slow && ++k % 4 == 0) {
				int n = snprintf(buf, sizeof(buf), "X-Slow-%d: %d\r\n", me->n, k);
				if (send(s, buf, (size_t)n, MSG_NOSIGNAL) < 0)
					goto out_cut;
			}
		}
		close(s);
		break;
out_cut:
		atomic_fetch_add(&h->cuts, 1);
		close(s);
		usleep(500000);
	}
	return NULL;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The value of PromQL fn(up{job="JOB"}[window s]) at wall time t. */
static double up_over(int pport, const char *job, const char *fn, int window, double t)
{
	char q[256];

	snprintf(q, sizeof(q), "%s(up%%7Bjob%%3D%%22%s%%22%%7D%%5B%ds%%5D)&time=%.3f", fn, job,
		 window, t);
	return th_prom_query(pport, q);
}

/* The time of Prometheus's last scrape of job (NAN: none yet). */
static double last_scrape(int pport, const char *job)
{
	char q[256];

	snprintf(q, sizeof(q), "timestamp(up%%7Bjob%%3D%%22%s%%22%%7D)", job);
	return th_prom_query(pport, q);
}

/* 100 holders of one kind against one tacho serve, which Prometheus scrapes as job. */
struct held {
	struct th_proc serve;
	int port;
	const char *job;
	bool slow;
	int first, naddr;
	struct holders h;
	struct holder hs[100];
	pthread_t th[100];
};

/* Each scrape of the last 10 s of the holders succeeded within its timeout (up is 1 for
 * a scrape answered in time, 0 for one that was not), and the server did cut holders to
 * make room. */
static void judge_held(struct held *k, int pport, double t_end)
{
	double min_up = up_over(pport, k->job, "min_over_time", 10, t_end),
	       n_up = up_over(pport, k->job, "count_over_time", 10, t_end);

	print_message("%s holders: %u connections, %u cut by the server; scrapes in the last "
		      "10 s: %g, all up: %s\n", k->slow ? "slow" : "idle",
		      atomic_load(&k->h.connects), atomic_load(&k->h.cuts), n_up,
		      min_up == 1 ? "yes" : "no");
	if (!(min_up == 1) || !(n_up >= 3)) {
		char *err = th_slurp(k->serve.err);
		fail_msg("with 100 %s clients, %g scrapes in 10 s, the lowest up %g (tacho "
			 "serve's stderr: %s)", k->slow ? "slow" : "idle", n_up, min_up, err);
	}
	/* they held places: the server cut some to let others in */
	assert_true(atomic_load(&k->h.cuts) > 0);
}

/* Slow clients from 8 addresses other than Prometheus's, which the limit in all holds,
 * against one tacho serve; idle ones from Prometheus's own address, which the limit of
 * one client holds, against another; Prometheus scrapes both (the two servers' guards
 * are their own, so each sees what it would alone: the two kinds run at once, in the
 * time of one). */
static void test_slow_and_idle_clients(void **state)
{
	struct held held[2] = {
		{ .job = "tacho-slow", .slow = true, .first = 2, .naddr = 8 },
		{ .job = "tacho-idle", .slow = false, .first = 1, .naddr = 1 },
	};
	struct th_proc prom;
	char cfg[4096], cfgarg[4200], data[4200], listen[64];
	char *argv[] = { (char *)"prometheus", cfgarg, data, listen, NULL };
	int pport = th_free_port();
	double end, t_end;
	FILE *f;
	(void)state;

	if (!have("prometheus"))
		TEST_SKIP("prometheus is not installed");
	held[0].port = start_serve(&held[0].serve, "serve-slow", "-d", "0.5", "--view", "cpu",
				   NULL, NULL);
	held[1].port = start_serve(&held[1].serve, "serve-idle", "-d", "0.5", "--view", "cpu",
				   NULL, NULL);
	snprintf(cfg, sizeof(cfg), "%s", th_tmp("prometheus-held.yml"));
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f, "global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n"
		   "  evaluation_interval: 1s\nscrape_configs:\n");
	for (int i = 0; i < 2; i++)
		fprintf(f, "  - job_name: %s\n    static_configs:\n"
			   "      - targets: ['127.0.0.1:%d']\n", held[i].job, held[i].port);
	fclose(f);
	snprintf(data, sizeof(data), "--storage.tsdb.path=%s", th_tmp("prometheus-held-tsdb"));
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", pport);
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	th_spawn(&prom, "prometheus-held", argv);
	end = th_now() + 30;
	for (int i = 0; i < 2; i++) {
		char q[128];
		double up = NAN;

		snprintf(q, sizeof(q), "up%%7Bjob%%3D%%22%s%%22%%7D", held[i].job);
		while (!(up == 1) && th_now() < end) {
			usleep(200000);
			up = th_prom_query(pport, q);
		}
		if (!(up == 1)) {
			char *log = th_slurp(prom.err);
			fail_msg("Prometheus never scraped %s; its log:\n%s", held[i].job, log);
		}
	}
	for (int i = 0; i < 2; i++) {
		struct held *k = &held[i];

		k->h = (struct holders){ .port = k->port, .first = k->first, .naddr = k->naddr,
					 .slow = k->slow };
		for (int j = 0; j < 100; j++) {
			k->hs[j] = (struct holder){ .h = &k->h, .n = j };
			assert_int_equal(pthread_create(&k->th[j], NULL, holder_main, &k->hs[j]), 0);
		}
	}
	/* they take their places, then 10 s of scrapes are judged */
	usleep(12 * 1000000);
	t_end = wall_now();
	for (int i = 0; i < 2; i++)
		atomic_store(&held[i].h.stop, true);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 100; j++)
			pthread_join(held[i].th[j], NULL);
	/* the scrape under way at t_end is recorded once it has answered or timed out:
	 * once a scrape that began after t_end is there */
	end = th_now() + 30;
	for (int i = 0; i < 2; i++) {
		double last = NAN;

		while (!(last > t_end) && th_now() < end) {
			usleep(200000);
			last = last_scrape(pport, held[i].job);
		}
		if (!(last > t_end))
			fail_msg("Prometheus scraped %s no more after the holders", held[i].job);
		judge_held(&held[i], pport, t_end);
	}
	th_proc_kill(&prom, SIGTERM);
	assert_true(th_proc_wait(&prom, 20));
	for (int i = 0; i < 2; i++) {
		th_proc_kill(&held[i].serve, SIGTERM);
		assert_true(th_proc_wait(&held[i].serve, 15));
		assert_int_equal(held[i].serve.status, 0);
	}
}

/* GET /metrics from [::1]:port: the status code, -1 when nothing answered, -2 when this
 * machine has no IPv6 loopback. */
static int http_get6(int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	char buf[64] = "";
	int s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), code = -1;
	ssize_t n;

	if (s < 0)
		return -2;
	if (connect(s, (struct sockaddr *)&a, sizeof(a))) {
		code = errno == EADDRNOTAVAIL || errno == ENETUNREACH ? -2 : -1;
		close(s);
		return code;
	}
	if (write(s, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1 &&
	    (n = read(s, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "HTTP/%*s %d", &code) != 1)
			code = -1;
	}
	close(s);
	return code;
}

/* tacho serve --listen on a free port, the spec made from fmt (one %d, the port) into
 * spec, waited for until ready (v4 over 127.0.0.1, or v6 over ::1); the port. A port
 * another job bound between th_free_port and tacho's bind is taken again, up to 5 times:
 * the pool's other tests start servers too. */
static int serve_on(struct th_proc *p, const char *tag, const char *fmt, char *spec,
		    size_t specsz, bool v6)
{
	char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", spec,
			 (char *)"-d", (char *)"0.2", (char *)"--view", (char *)"machine", NULL };

	for (int tries = 0; tries < 5; tries++) {
		int port = th_free_port();
		double end = th_now() + 15;

		snprintf(spec, specsz, fmt, port);
		th_spawn(p, tag, argv);
		while (th_now() < end) {
			if ((v6 ? http_get6(port) : th_http_get(port, "/api/frame", NULL, NULL)) ==
			    200)
				return port;
			if (th_proc_wait(p, 0.05)) {
				char *err = th_slurp(p->err);
				if (strstr(err, "Address already in use") && tries < 4) {
					free(err);
					break;
				}
				fail_msg("tacho serve --listen %s ended (%d): %s", spec, p->status,
					 err);
			}
		}
		if (th_now() >= end)
			fail_msg("tacho serve --listen %s does not answer", spec);
	}
	fail_msg("tacho serve --listen: every port taken was bound by another first");
	return -1;
}

/* ":PORT" is every address, IPv6 and IPv4 (it was 0.0.0.0 alone), and says once that
 * the counters are then readable beyond this machine; "[::1]:PORT" is IPv6's loopback,
 * and 127.0.0.1 IPv4's, which say nothing. */
static void test_listen(void **state)
{
	struct th_proc serve;
	char spec[32], *err;
	int port, v6;
	(void)state;

	port = serve_on(&serve, "serve-any", ":%d", spec, sizeof(spec), false);
	v6 = http_get6(port);
	if (v6 != -2)
		assert_int_equal(v6, 200);
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 15));
	assert_int_equal(serve.status, 0);
	err = th_slurp(serve.err);
	assert_int_equal(th_count(err, "tacho: warning: serving on ["), v6 == -2 ? 0 : 1);
	assert_int_equal(th_count(err, "warning: serving on"), 1);
	assert_contains(err, "whoever can reach it reads the counters");
	free(err);

	serve_on(&serve, "serve-v4lo", "127.0.0.1:%d", spec, sizeof(spec), false);
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 15));
	err = th_slurp(serve.err);
	assert_not_contains(err, "serving on");
	free(err);

	if (v6 == -2)
		TEST_SKIP("no IPv6 loopback here: --listen [::1] was not tried (the rest was)");
	serve_on(&serve, "serve-v6lo", "[::1]:%d", spec, sizeof(spec), true);
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 15));
	assert_int_equal(serve.status, 0);
	err = th_slurp(serve.err);
	assert_not_contains(err, "serving on");
	assert_contains(err, "tacho serve: http://[::1]:");
	free(err);
}

static void test_bad_input(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	struct th_run r;
	char busy[32];
	int s;
	(void)state;

	/* a port in use */
	s = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 1), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
	snprintf(busy, sizeof(busy), "127.0.0.1:%d", ntohs(a.sin_port));
	th_tacho(&r, "serve", "--listen", busy, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot listen on 127.0.0.1:");
	assert_contains(r.err, "in use");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	close(s);
	th_tacho(&r, "serve", "--listen", "127.0.0.1:99999", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad --listen '127.0.0.1:99999'");
	th_run_free(&r);
	th_tacho(&r, "serve", "--listen", "not-an-address:80", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad --listen address");
	th_run_free(&r);
	th_tacho(&r, "serve", "--listen", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad --listen '0'");
	th_run_free(&r);
	snprintf(busy, sizeof(busy), "%d", th_free_port());
	th_tacho(&r, "serve", "--listen", busy, "-e", "page-faults,bogus-event", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: bad event list");
	assert_contains(r.err, "^");
	th_run_free(&r);
	th_tacho(&r, "serve", "--listen", busy, "-G", "tacho-no-such-cgroup", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "no cgroup 'tacho-no-such-cgroup'");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_promtool_openmetrics, th_procs_teardown),
		cmocka_unit_test_teardown(test_prometheus_vm_page, th_procs_teardown),
		cmocka_unit_test_teardown(test_many_clients, th_procs_teardown),
		cmocka_unit_test_teardown(test_slow_and_idle_clients, th_procs_teardown),
		cmocka_unit_test_teardown(test_listen, th_procs_teardown),
		cmocka_unit_test_teardown(test_bad_input, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
