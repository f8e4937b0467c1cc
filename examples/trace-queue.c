/* trace-queue.c - a producer and a consumer around a bounded queue, marked for tacho
 * trace: the example of docs/trace.md, whose delta table answers "how long does an
 * item wait in the queue" (enqueue -> dequeue).
 *
 *   tacho trace -o queue.trace -- build/examples/trace-queue [ITEMS]
 *   tacho trace report -i queue.trace
 *
 * The producer puts ITEMS items (default 500) into a queue of 8, one every 100 us;
 * the consumer takes each and works on it for about 150 us (a region "consume"), so
 * the queue fills and items wait longer and longer until the producer is held up. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tacho.h"

#define QSIZE 8

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	uint64_t items[QSIZE];
	unsigned head, len;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };

static long nitems = 500;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *producer(void *arg)
{
	struct timespec gap = { 0, 100000 };

	for (long i = 0; i < nitems; i++) {
		nanosleep(&gap, NULL);
		pthread_mutex_lock(&q.lock);
		while (q.len == QSIZE)
			pthread_cond_wait(&q.not_full, &q.lock);
		q.items[(q.head + q.len++) % QSIZE] = (uint64_t)i;
		tacho_mark("enqueue", (uint64_t)i);
		tacho_mark_counter("queue length", q.len);
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.lock);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	for (long i = 0; i < nitems; i++) {
		uint64_t item, until;

		pthread_mutex_lock(&q.lock);
		while (q.len == 0)
			pthread_cond_wait(&q.not_empty, &q.lock);
		item = q.items[q.head];
		q.head = (q.head + 1) % QSIZE;
		q.len--;
		tacho_mark("dequeue", item);
		tacho_mark_counter("queue length", q.len);
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.lock);

		tacho_region_begin("consume");
		until = now_ns() + 150000;
		while (now_ns() < until)
			;
		tacho_region_end("consume");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct tacho_regions_opts ro = { .sz = sizeof(ro), .events = "",
					 .no_report_at_exit = true };
	struct tacho_diag d = { .sz = sizeof(d) };
	pthread_t p, c;

	if (TACHO_CHECK_VERSION(&d)) {
		fprintf(stderr, "%s\n", d.message);
		return 1;
	}
	if (argc > 1)
		nitems = atol(argv[1]);
	if (nitems < 1) {
		fprintf(stderr, "usage: trace-queue [ITEMS]\n");
		return 2;
	}
	if (tacho_regions_init(&ro, &d)) {
		fprintf(stderr, "trace-queue: %s\n", d.message);
		return 1;
	}
	if (pthread_create(&p, NULL, producer, NULL) || pthread_create(&c, NULL, consumer, NULL)) {
		fprintf(stderr, "trace-queue: cannot start the threads\n");
		return 1;
	}
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("%ld items through a queue of %d\n", nitems, QSIZE);
	return 0;
}
