"""tacho: CPU performance monitoring from Python, over libtacho.so (ctypes).

    import tacho
    with tacho.Counters(["page-faults", "task-clock"]) as c:
        work()
    for v in c.values():          # each with its status and, when not counted, why
        print(v.name, v.status, v.value, v.why)

    with tacho.region("parse"):   # a region of the program (docs/regions.md)
        parse()
    tacho.regions_report()        # every region's figures, as tacho's JSON

    tacho.stat(["./prog"], events=["page-faults"], repeat=3)   # tacho stat --json's document
    tacho.cpu()                   # tacho cpu --json's document
    tacho.recording_rows("tacho.rec")  # a recording's samples, one dict each
    tacho.recording_frame("tacho.rec") # the same as a pandas DataFrame (when pandas is there)

The library is the one named by $TACHO_LIBRARY, else the build tree's when this package
is run from the source tree (python/../build), else libtacho.so.0 wherever the dynamic
loader finds it (an install, the libtacho0 package). docs/python.md says more.
"""
import contextlib
import ctypes
import ctypes.util
import json
import math
import os

__all__ = ["TachoError", "version", "Counters", "CountValue", "region", "regions_report",
           "stat", "cpu", "recording_rows", "recording_frame"]

# --- the library and the C library ---------------------------------------------------

def _find_library():
    env = os.environ.get("TACHO_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "build", "libtacho.so.0")
    if os.path.exists(os.path.join(here, "..", "..", "include", "tacho.h")) and \
            os.path.exists(tree):
        return os.path.normpath(tree)
    return "libtacho.so.0"


_lib = ctypes.CDLL(_find_library())
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)

_c_size_t = ctypes.c_size_t
_vp = ctypes.c_void_p
_cp = ctypes.c_char_p

_libc.open_memstream.restype = _vp
_libc.open_memstream.argtypes = [ctypes.POINTER(_vp), ctypes.POINTER(_c_size_t)]
_libc.fclose.argtypes = [_vp]
_libc.free.argtypes = [_vp]

TACHO_FORMAT_JSON = 2
TACHO_TARGET_THREAD = 0
TACHO_TARGET_PROCESS = 1
TACHO_TARGET_CHILD = 2


class TachoError(OSError):
    """A libtacho call failed: errno is the library's positive error number, strerror
    its sentence (tacho_strerror), with the parser's message where there is one."""


class _Diag(ctypes.Structure):
    _fields_ = [("sz", _c_size_t), ("source", ctypes.c_char * 256), ("line", ctypes.c_uint),
                ("column", ctypes.c_uint), ("message", ctypes.c_char * 256),
                ("hint", ctypes.c_int)]

    def __init__(self):
        super().__init__()
        self.sz = ctypes.sizeof(self)


_lib.tacho_version.restype = _cp
_lib.tacho_strerror.restype = _cp
_lib.tacho_strerror.argtypes = [ctypes.c_int]


def _check(err, what, diag=None):
    if err >= 0:
        return err
    msg = _lib.tacho_strerror(err).decode()
    if diag is not None and diag.message:
        msg = "%s: %s" % (diag.message.decode(errors="replace"), msg)
    raise TachoError(-err, "%s: %s" % (what, msg))


def _written(fn, *args):
    """What fn(*args, FILE *f) writes, as text (an open_memstream)."""
    buf, size = _vp(), _c_size_t()
    f = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        raise OSError(ctypes.get_errno(), "open_memstream")
    try:
        err = fn(*args[:1], f, *args[1:]) if args else fn(f)
    finally:
        _libc.fclose(f)
    try:
        text = ctypes.string_at(buf, size.value).decode(errors="replace") if buf else ""
    finally:
        _libc.free(buf)
    return err, text


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.tacho_version().decode()

# --- events ----------------------------------------------------------------------------

_lib.tacho_evlist_parse.argtypes = [_cp, ctypes.POINTER(_vp), ctypes.POINTER(_Diag)]
_lib.tacho_evlist_free.argtypes = [_vp]


class _Evlist:
    ptr = None

    def __init__(self, events):
        if isinstance(events, str):
            events = [events]
        spec = ",".join(events)
        self.ptr, diag = _vp(), _Diag()
        _check(_lib.tacho_evlist_parse(spec.encode(), ctypes.byref(self.ptr),
                                       ctypes.byref(diag)), "bad events '%s'" % spec, diag)

    def close(self):
        if self.ptr:
            _lib.tacho_evlist_free(self.ptr)
            self.ptr = _vp()

    def __del__(self):
        self.close()

# --- counting --------------------------------------------------------------------------

class _CountersOpts(ctypes.Structure):
    _fields_ = [("sz", _c_size_t), ("target", ctypes.c_int), ("pid", ctypes.c_int),
                ("cpus", _vp), ("ncpus", _c_size_t), ("no_inherit", ctypes.c_bool),
                ("no_group_read", ctypes.c_bool)]


class _Count(ctypes.Structure):
    _fields_ = [("name", _cp), ("status", ctypes.c_int), ("raw", ctypes.c_uint64),
                ("value", ctypes.c_double), ("enabled_ns", ctypes.c_uint64),
                ("running_ns", ctypes.c_uint64), ("coverage", ctypes.c_double),
                ("err", ctypes.c_int), ("why", _cp), ("hint", ctypes.c_int)]


_lib.tacho_counters_open_evlist.argtypes = [ctypes.POINTER(_CountersOpts), _vp, _vp,
                                            ctypes.POINTER(_vp)]
for _f in ("tacho_counters_enable", "tacho_counters_disable", "tacho_counters_reset"):
    getattr(_lib, _f).argtypes = [_vp]
_lib.tacho_counters_free.argtypes = [_vp]
_lib.tacho_counters_count.argtypes = [_vp]
_lib.tacho_counters_count.restype = _c_size_t
_lib.tacho_counters_read.argtypes = [_vp, ctypes.POINTER(_Count), _c_size_t, _c_size_t]
_lib.tacho_count_status_name.restype = _cp
_lib.tacho_count_status_name.argtypes = [ctypes.c_int]


class CountValue:
    """One event's value: name, status ("counted", "multiplexed", "not counted", "not
    supported", "simulated"), value (None when there is none), raw, coverage,
    enabled_ns, running_ns, and why (a sentence) when it was not counted."""
    __slots__ = ("name", "status", "value", "raw", "coverage", "enabled_ns", "running_ns",
                 "err", "why")

    def __init__(self, c):
        self.name = c.name.decode() if c.name else ""
        self.status = _lib.tacho_count_status_name(c.status).decode()
        self.value = None if math.isnan(c.value) else c.value
        self.raw = c.raw
        self.coverage = c.coverage
        self.enabled_ns = c.enabled_ns
        self.running_ns = c.running_ns
        self.err = c.err
        self.why = c.why.decode() if c.why else None

    @property
    def counted(self):
        return self.status in ("counted", "multiplexed")

    def __repr__(self):
        return "CountValue(%r, %s, %r%s)" % (self.name, self.status, self.value,
                                            ", why=%r" % self.why if self.why else "")


class Counters:
    """Events counted on this thread (or, with process=True, every thread of this
    process), from the `with` block's start to its end, or between start() and stop().
    An event that cannot be counted here does not raise: its value says why."""

    def __init__(self, events, process=False):
        self._c = _vp()
        self._list = _Evlist(events)
        opts = _CountersOpts(sz=ctypes.sizeof(_CountersOpts),
                             target=TACHO_TARGET_PROCESS if process else TACHO_TARGET_THREAD,
                             pid=0)
        self._c = _vp()
        _check(_lib.tacho_counters_open_evlist(ctypes.byref(opts), self._list.ptr, None,
                                               ctypes.byref(self._c)), "cannot count")
        self._n = _lib.tacho_counters_count(self._c)
        self._values = None

    def start(self):
        _check(_lib.tacho_counters_reset(self._c), "reset")
        _check(_lib.tacho_counters_enable(self._c), "enable")

    def stop(self):
        _check(_lib.tacho_counters_disable(self._c), "disable")
        return self.read()

    def read(self):
        """The values now: a list of CountValue, in the order of the events."""
        out = (_Count * self._n)()
        _check(_lib.tacho_counters_read(self._c, out, self._n, ctypes.sizeof(_Count)), "read")
        self._values = [CountValue(c) for c in out]
        return self._values

    def values(self):
        """The values read when the block ended (or by the last read)."""
        return self._values if self._values is not None else self.read()

    def __getitem__(self, name):
        for v in self.values():
            if v.name == name:
                return v
        raise KeyError(name)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def close(self):
        if self._c:
            _lib.tacho_counters_free(self._c)
            self._c = _vp()
        if getattr(self, "_list", None):
            self._list.close()

    def __del__(self):
        self.close()

# --- regions ---------------------------------------------------------------------------

_lib.tacho_region_begin.argtypes = [_cp]
_lib.tacho_region_end.argtypes = [_cp]
_lib.tacho_regions_report_new.argtypes = [ctypes.POINTER(_vp)]
_lib.tacho_regions_report_free.argtypes = [_vp]
_lib.tacho_regions_report_write.argtypes = [_vp, _vp, ctypes.c_int, _vp]


@contextlib.contextmanager
def region(name):
    """A region of the program: its time (and TACHO_EVENTS' events) per call, as
    tacho_region_begin/end measure them; regions_report() gives the figures."""
    b = name.encode()
    _check(_lib.tacho_region_begin(b), "region '%s'" % name)
    try:
        yield
    finally:
        _lib.tacho_region_end(b)


def regions_report():
    """Every region's figures so far, as the regions' JSON report (docs/schemas.md)."""
    r = _vp()
    _check(_lib.tacho_regions_report_new(ctypes.byref(r)), "regions report")
    try:
        err, text = _written(lambda f: _lib.tacho_regions_report_write(
            r, f, TACHO_FORMAT_JSON, None))
        _check(err, "regions report")
    finally:
        _lib.tacho_regions_report_free(r)
    return json.loads(text)

# --- stat ------------------------------------------------------------------------------

class _StatOpts(ctypes.Structure):
    # the first fields of struct tacho_stat_opts: the library gives the others their
    # defaults (sz says how far the caller's struct goes)
    _fields_ = [("sz", _c_size_t), ("events", _vp), ("target", ctypes.c_int),
                ("argv", ctypes.POINTER(_cp)), ("pid", ctypes.c_int), ("cpus", _vp),
                ("ncpus", _c_size_t), ("repeat", ctypes.c_uint), ("warmup", ctypes.c_uint),
                ("sched_flags", ctypes.c_uint), ("pmu", _vp), ("interval_ms", ctypes.c_uint),
                ("on_interval", _vp), ("interval_arg", _vp), ("on_progress", _vp),
                ("progress_arg", _vp), ("stop", _vp), ("exec_err", ctypes.POINTER(ctypes.c_int))]


class _StatAbout(ctypes.Structure):
    _fields_ = [("sz", _c_size_t), ("argv", ctypes.POINTER(_cp)), ("target", _cp),
                ("repeat", ctypes.c_uint)]


_lib.tacho_stat_run.argtypes = [ctypes.POINTER(_StatOpts), ctypes.POINTER(_vp),
                                ctypes.POINTER(_Diag)]
_lib.tacho_stat_free.argtypes = [_vp]
_lib.tacho_stat_write.argtypes = [_vp, ctypes.POINTER(_StatAbout), _vp, ctypes.c_int, _vp]

DEFAULT_STAT_EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults"]


def stat(argv, events=None, repeat=None, warmup=0):
    """Runs the program argv (a list: ["./prog", "arg"]) once, or repeat times, counting
    events, and returns what `tacho stat --json [-r repeat]` writes for it, as a dict:
    "events", each with its "status" and, when not counted, its "explanation";
    "metrics"; the times. With repeat, each event has its "values" and statistics."""
    if isinstance(argv, str):
        argv = [argv]
    lst = _Evlist(events or DEFAULT_STAT_EVENTS)
    cargv = (_cp * (len(argv) + 1))(*[a.encode() for a in argv], None)
    exec_err = ctypes.c_int(0)
    opts = _StatOpts(sz=ctypes.sizeof(_StatOpts), events=lst.ptr, target=TACHO_TARGET_CHILD,
                     argv=cargv, repeat=repeat or 1, warmup=warmup,
                     exec_err=ctypes.pointer(exec_err))
    s, diag = _vp(), _Diag()
    try:
        err = _lib.tacho_stat_run(ctypes.byref(opts), ctypes.byref(s), ctypes.byref(diag))
        if err < 0 and exec_err.value:
            raise TachoError(exec_err.value, "cannot run '%s': %s" %
                             (argv[0], os.strerror(exec_err.value)))
        _check(err, "stat %s" % " ".join(argv), diag)
        about = _StatAbout(sz=ctypes.sizeof(_StatAbout), argv=cargv, repeat=repeat or 0)
        err, text = _written(lambda f: _lib.tacho_stat_write(s, ctypes.byref(about), f,
                                                             TACHO_FORMAT_JSON, None))
        _check(err, "stat")
    finally:
        _lib.tacho_stat_free(s)
        lst.close()
    return json.loads(text)

# --- the CPU ---------------------------------------------------------------------------

class _CpuView(ctypes.Structure):
    _fields_ = [("sz", _c_size_t), ("info", _vp), ("live", ctypes.c_bool),
                ("decoded", _cp), ("tsc_hz", ctypes.c_double), ("tsc_source", ctypes.c_int),
                ("tsc_kernel_hz", ctypes.c_double), ("tsc_calibrated_hz", ctypes.c_double),
                ("sysfs", _vp), ("sysfs_err", ctypes.c_int), ("crosscheck", _vp),
                ("crosscheck_skipped", _cp), ("tsc_unmeasured", _cp)]


_lib.tacho_cpuid_dump_live.argtypes = [ctypes.POINTER(_vp)]
_lib.tacho_cpuid_dump_free.argtypes = [_vp]
_lib.tacho_cpu_decode.argtypes = [_vp, _vp]
_lib.tacho_cpu_info_exit.argtypes = [_vp]
_lib.tacho_cpu_write.argtypes = [ctypes.POINTER(_CpuView), _vp, ctypes.c_int, _vp]
# struct tacho_cpu_info is large and grows at its end: a buffer bigger than any version,
# its sz saying so; the library fills what it knows and leaves the rest
_CPU_INFO_BYTES = 1 << 20


def cpu():
    """This machine's processor, decoded from CPUID: `tacho cpu --json`'s document
    (without the kernel's cross-check)."""
    dump = _vp()
    _check(_lib.tacho_cpuid_dump_live(ctypes.byref(dump)), "cpuid")
    info = ctypes.create_string_buffer(_CPU_INFO_BYTES)
    _c_size_t.from_buffer(info).value = _CPU_INFO_BYTES
    try:
        _check(_lib.tacho_cpu_decode(dump, info), "cpu decode")
        view = _CpuView(sz=ctypes.sizeof(_CpuView), info=ctypes.addressof(info), live=True,
                        crosscheck_skipped=b"the Python binding")
        err, text = _written(lambda f: _lib.tacho_cpu_write(ctypes.byref(view), f,
                                                            TACHO_FORMAT_JSON, None))
        _check(err, "cpu")
    finally:
        _lib.tacho_cpu_info_exit(info)
        _lib.tacho_cpuid_dump_free(dump)
    return json.loads(text)

# --- recordings ------------------------------------------------------------------------

_lib.tacho_profile_load.argtypes = [_cp, ctypes.POINTER(_vp), ctypes.POINTER(_Diag)]
_lib.tacho_profile_free.argtypes = [_vp]
_lib.tacho_profile_write_script_json.argtypes = [_vp, _vp]


def recording_rows(path):
    """The samples of a recording (tacho record's file, or perf's perf.data), one dict
    each, in time order: what `tacho report --format script-json` holds
    (docs/schemas.md): time, pid, tid, cpu, comm, event, period, ip, frames, ..."""
    p, diag = _vp(), _Diag()
    _check(_lib.tacho_profile_load(os.fsencode(path), ctypes.byref(p), ctypes.byref(diag)),
           "cannot read '%s'" % path, diag)
    try:
        err, text = _written(lambda f: _lib.tacho_profile_write_script_json(p, f))
        _check(err, "cannot export '%s'" % path)
    finally:
        _lib.tacho_profile_free(p)
    doc = json.loads(text)
    return doc["samples"] if isinstance(doc, dict) and "samples" in doc else doc


def recording_frame(path):
    """recording_rows as a pandas DataFrame; ImportError when pandas is not installed."""
    import pandas  # only here: the rest of the binding needs nothing but python3
    return pandas.DataFrame(recording_rows(path))
