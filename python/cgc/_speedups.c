/* _speedups.c: the hot path of a decode loop in C, for the pure Python
 * package to use where it was built (an optional extension: pip builds it
 * when a C compiler and Python's headers are there; without it, or with
 * CGC_PURE_PYTHON=1 in the environment, the package runs the same code in
 * Python over ctypes).
 *
 *   Core     the base of every graph class: the graph's runtime handle, the
 *            scalars' cells and marks and cgrt_set_launch's address, given
 *            by the Python side after cgrt_create (_core_init), and
 *            launch(stream=None), which sets the marked scalars and launches
 *            in one call to cgrt_set_launch.
 *   Scalar   the descriptor of g.NAME for one scalar: a set of a Python int
 *            (integer types) or float (f32, f64) that fits goes straight
 *            into the scalar's cell and marks it.
 *
 * Anything else (a closed graph, a value of another type or out of range,
 * f16 and bf16, a stream that is not an int, a first launch under PyTorch,
 * any error) goes to the Python code that the pure package runs, so that
 * both say the same thing and end in the same state: this file only ever
 * does what that code would have done, faster. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x03090000
#define PyObject_Vectorcall _PyObject_Vectorcall
#endif

/* cgrt_set_launch (runtime/cgrt.h), taken by address from the loaded
 * library: this module links nothing of the runtime. */
typedef int (*set_launch_fn)(void *graph, uint8_t *set, const void *const *values, void *stream);

typedef struct {
  PyObject_HEAD
  set_launch_fn set_launch;
  void *h;                   /* cgrt_graph *, NULL once closed */
  uint8_t *marks;            /* per scalar: set since the last launch */
  void *const *cells;        /* per scalar: the address of its value */
  Py_ssize_t nscalars;
  PyObject *stream_fn;       /* _stream_fn: PyTorch's current stream, or NULL */
} Core;

static PyObject *str_torch, *str_launch_slow, *str_launch;

static PyTypeObject CoreType;

static int core_traverse(Core *self, visitproc visit, void *arg) {
  Py_VISIT(self->stream_fn);
  return 0;
}

static int core_clear(Core *self) {
  Py_CLEAR(self->stream_fn);
  return 0;
}

static void core_dealloc(Core *self) {
  PyObject_GC_UnTrack(self);
  core_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static void *address(PyObject *o, const char *what) {
  void *p = PyLong_AsVoidPtr(o);
  if (!p && !PyErr_Occurred())
    PyErr_Format(PyExc_ValueError, "_core_init: %s is NULL", what);
  return p;
}

/* _core_init(set_launch, graph, marks, cells, nscalars): addresses as ints,
 * owned by the Python side, which keeps them alive as long as the graph
 * object; _core_close() forgets the graph. */
static PyObject *core_init(Core *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "_core_init takes 5 arguments");
    return NULL;
  }
  void *fn = address(args[0], "set_launch"), *h, *marks, *cells;
  if (!fn || !(h = address(args[1], "the graph")) || !(marks = address(args[2], "marks")) ||
      !(cells = address(args[3], "cells")))
    return NULL;
  Py_ssize_t n = PyLong_AsSsize_t(args[4]);
  if (n < 0) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "_core_init: a negative number of scalars");
    return NULL;
  }
  /* A function pointer from an object pointer: the address ctypes gave. */
  memcpy(&self->set_launch, &fn, sizeof fn);
  self->h = h;
  self->marks = marks;
  self->cells = cells;
  self->nscalars = n;
  Py_RETURN_NONE;
}

static PyObject *core_close(Core *self, PyObject *unused) {
  (void)unused;
  self->h = NULL;
  self->marks = NULL;
  self->cells = NULL;
  self->nscalars = 0;
  Py_RETURN_NONE;
}

/* The Python launch, with the arguments as given. */
static PyObject *launch_slow(PyObject *self, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames) {
  PyObject *meth = PyObject_GetAttr(self, str_launch_slow);
  if (!meth)
    return NULL;
  PyObject *r = PyObject_Vectorcall(meth, args, nargsf, kwnames);
  Py_DECREF(meth);
  return r;
}

/* The stream a launch with `stream` goes to: 1 with *s set, 0 when that
 * is Python's to work out, -1 on an error. */
static int stream_of(Core *self, PyObject *stream, void **s) {
  *s = NULL;
  if (stream == Py_None) {
    PyObject *modules = PyImport_GetModuleDict(); /* borrowed */
    int torch = PyDict_Contains(modules, str_torch);
    if (torch <= 0)
      return torch < 0 ? -1 : 1; /* no PyTorch: the legacy default stream */
    if (!self->stream_fn || self->stream_fn == Py_None) /* its first launch under PyTorch */
      return 0;
    PyObject *r = PyObject_CallObject(self->stream_fn, NULL);
    if (!r)
      return -1;
    int exact = PyLong_CheckExact(r);
    if (exact)
      *s = PyLong_AsVoidPtr(r);
    Py_DECREF(r);
    return !exact ? 0 : !*s && PyErr_Occurred() ? -1 : 1;
  }
  if (!PyLong_CheckExact(stream))
    return 0;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(stream, &overflow);
  if (overflow || v < 0)
    return 0;
  *s = (void *)(uintptr_t)v;
  return 1;
}

/* METH_FASTCALL | METH_KEYWORDS: nargs is the count of positional
 * arguments, with no vectorcall flag in it.  What this leaves to Python
 * goes to _launch_slow with the arguments as given. */
static PyObject *core_launch(Core *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  void *s = NULL;
  int fast = self->h && nargs + nkw <= 1 &&
             (nkw == 0 || (PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) &&
                           !PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                                             "stream")));
  if (fast && (fast = stream_of(self, nargs + nkw ? args[0] : Py_None, &s)) < 0)
    return NULL;
  if (!fast)
    return launch_slow((PyObject *)self, args, (size_t)nargs, kwnames);
  int status;
  set_launch_fn fn = self->set_launch;
  void *h = self->h;
  uint8_t *marks = self->marks;
  void *const *cells = self->cells;
  Py_BEGIN_ALLOW_THREADS
  status = fn(h, marks, (const void *const *)cells, s);
  Py_END_ALLOW_THREADS
  if (status == 0)
    Py_RETURN_NONE;
  PyObject *exc = PyObject_CallMethod((PyObject *)self, "_error", "Oi", str_launch, status);
  if (exc) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

static PyMethodDef core_methods[] = {
    {"_core_init", (PyCFunction)(void (*)(void))core_init, METH_FASTCALL,
     "_core_init(set_launch, graph, marks, cells, nscalars): the addresses the fast path uses"},
    {"_core_close", (PyCFunction)core_close, METH_NOARGS, "_core_close(): the graph is gone"},
    {"launch", (PyCFunction)(void (*)(void))core_launch, METH_FASTCALL | METH_KEYWORDS,
     "launch(stream=None)\n\nLaunches the graph in `stream`: by default PyTorch's current stream\n"
     "when PyTorch is imported, else the legacy default stream (0)."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef core_members[] = {
    {"_stream_fn", T_OBJECT, offsetof(Core, stream_fn), 0,
     "PyTorch's current stream as an int, once a launch has looked it up"},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cgc._speedups.Core",
    .tp_basicsize = sizeof(Core),
    .tp_dealloc = (destructor)core_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The C part of a graph object (cgc's optional speedups).",
    .tp_traverse = (traverseproc)core_traverse,
    .tp_clear = (inquiry)core_clear,
    .tp_methods = core_methods,
    .tp_members = core_members,
    .tp_new = PyType_GenericNew,
};

/* ---- g.NAME ---- */

/* The scalar types, in the runtime's order (cgrt_abi.h: CGRT_I8 ... CGRT_F64). */
enum { I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, NTYPES };

typedef struct {
  PyObject_HEAD
  Py_ssize_t index;
  int type;
  PyObject *prop; /* the pure package's property: gets, deletes, and every other set */
} Scalar;

static int scalar_traverse(Scalar *self, visitproc visit, void *arg) {
  Py_VISIT(self->prop);
  return 0;
}

static int scalar_clear(Scalar *self) {
  Py_CLEAR(self->prop);
  return 0;
}

static void scalar_dealloc(Scalar *self) {
  PyObject_GC_UnTrack(self);
  scalar_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *scalar_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  Py_ssize_t index;
  int t;
  PyObject *prop;
  static char *kw[] = {"index", "type", "prop", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "niO:Scalar", kw, &index, &t, &prop))
    return NULL;
  if (index < 0 || t < 0 || t >= NTYPES) {
    PyErr_SetString(PyExc_ValueError, "Scalar: an index or type out of range");
    return NULL;
  }
  Scalar *self = (Scalar *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  self->index = index;
  self->type = t;
  Py_INCREF(prop);
  self->prop = prop;
  return (PyObject *)self;
}

static PyObject *scalar_get(Scalar *self, PyObject *obj, PyObject *type) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return (PyObject *)self;
  }
  return PyObject_CallMethod(self->prop, "__get__", "OO", obj, type ? type : Py_None);
}

/* Whether v went into the cell: 1 stored, 0 not this path's to store
 * (nothing changed, no error), -1 an error. */
static int store(const Scalar *self, void *cell, PyObject *v) {
  int t = self->type;
  if (t == F32 || t == F64) {
    if (!PyFloat_CheckExact(v))
      return 0;
    double d = PyFloat_AS_DOUBLE(v);
    if (t == F64) {
      memcpy(cell, &d, sizeof d);
      return 1;
    }
    float f = (float)d;
    if (isinf(f) && !isinf(d)) /* out of f32's range: the Python path says what it does */
      return 0;
    memcpy(cell, &f, sizeof f);
    return 1;
  }
  if (t == F16 || t == BF16 || !PyLong_CheckExact(v))
    return 0;
  if (t == U64) {
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError))
        return -1;
      PyErr_Clear(); /* negative or too large: the Python path says so */
      return 0;
    }
    uint64_t x = u;
    memcpy(cell, &x, sizeof x);
    return 1;
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred())
    return -1;
  if (overflow)
    return 0;
  switch (t) {
  case I8:
    if (x < INT8_MIN || x > INT8_MAX)
      return 0;
    *(int8_t *)cell = (int8_t)x;
    return 1;
  case I16:
    if (x < INT16_MIN || x > INT16_MAX)
      return 0;
    *(int16_t *)cell = (int16_t)x;
    return 1;
  case I32:
    if (x < INT32_MIN || x > INT32_MAX)
      return 0;
    *(int32_t *)cell = (int32_t)x;
    return 1;
  case I64:
    *(int64_t *)cell = (int64_t)x;
    return 1;
  case U8:
    if (x < 0 || x > UINT8_MAX)
      return 0;
    *(uint8_t *)cell = (uint8_t)x;
    return 1;
  case U16:
    if (x < 0 || x > UINT16_MAX)
      return 0;
    *(uint16_t *)cell = (uint16_t)x;
    return 1;
  case U32:
    if (x < 0 || x > (long long)UINT32_MAX)
      return 0;
    *(uint32_t *)cell = (uint32_t)x;
    return 1;
  }
  return 0;
}

static int scalar_set(Scalar *self, PyObject *obj, PyObject *value) {
  if (!value) {
    PyObject *r = PyObject_CallMethod(self->prop, "__delete__", "O", obj);
    Py_XDECREF(r);
    return r ? 0 : -1;
  }
  if (PyObject_TypeCheck(obj, &CoreType)) {
    Core *core = (Core *)obj;
    if (core->h && self->index < core->nscalars) {
      int stored = store(self, core->cells[self->index], value);
      if (stored < 0)
        return -1;
      if (stored) {
        core->marks[self->index] = 1;
        return 0;
      }
    }
  }
  PyObject *r = PyObject_CallMethod(self->prop, "__set__", "OO", obj, value);
  Py_XDECREF(r);
  return r ? 0 : -1;
}

static PyObject *scalar_doc(Scalar *self, void *unused) {
  (void)unused;
  return PyObject_GetAttrString(self->prop, "__doc__");
}

static PyGetSetDef scalar_getset[] = {{"__doc__", (getter)scalar_doc, NULL, NULL, NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef scalar_members[] = {
    {"index", T_PYSSIZET, offsetof(Scalar, index), READONLY, "the scalar's index"},
    {"prop", T_OBJECT, offsetof(Scalar, prop), READONLY, "the Python property behind it"},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject ScalarType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cgc._speedups.Scalar",
    .tp_basicsize = sizeof(Scalar),
    .tp_dealloc = (destructor)scalar_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Scalar(index, type, prop): g.NAME for one launch scalar (cgc's optional speedups).",
    .tp_traverse = (traverseproc)scalar_traverse,
    .tp_clear = (inquiry)scalar_clear,
    .tp_members = scalar_members,
    .tp_getset = scalar_getset,
    .tp_descr_get = (descrgetfunc)scalar_get,
    .tp_descr_set = (descrsetfunc)scalar_set,
    .tp_new = scalar_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cgc._speedups",
    "The hot path of cgc's graph objects in C (optional; see _graph.py).", -1, NULL,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
  if (!(str_torch = PyUnicode_InternFromString("torch")) ||
      !(str_launch_slow = PyUnicode_InternFromString("_launch_slow")) ||
      !(str_launch = PyUnicode_InternFromString("launch")))
    return NULL;
  if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&ScalarType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m)
    return NULL;
  Py_INCREF(&CoreType);
  if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
    Py_DECREF(&CoreType);
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(&ScalarType);
  if (PyModule_AddObject(m, "Scalar", (PyObject *)&ScalarType) < 0) {
    Py_DECREF(&ScalarType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
