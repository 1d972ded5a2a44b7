/* dlabtrace: a Valgrind tool that writes lackey's memory trace (`--tool=lackey --trace-mem=yes`)
 * for one code range only, in lackey's own line format, to a descriptor of its own in large writes.
 *
 * Why: lackey writes every instruction and access of the whole process, one write(2) per line
 * (about 2 microseconds a line on a Zen 5 guest): dlab's start-up alone is 7 million instructions
 * and 11 million lines, 21 s, before the interpreter's handlers run at all. The simulations need
 * the loads and stores of the traced code, its instructions (for the branch stream) and how many
 * instructions ran in between (for the memory-order window), nothing else. So:
 *
 *   "I  addr,size"   an instruction inside --range, or the first one outside after one inside (a
 *                    branch's target: the branch stream holds a branch until the next instruction)
 *   " L addr,size"   a load of an instruction inside the range (" S" a store; a modify is a load
 *                    line then a store line)
 *   "X count"        `count` instructions ran outside the range since the last I line
 *   "G count"        `count` instructions ran in a sampled trace's gap (--sample)
 *
 * Accesses are written in program order after their instruction (lackey's order, without its
 * merging of a load and store of one address into " M"). Reading: predictors/lackey_trace.h.
 *
 * A forked child writes nothing (the trace is the process valgrind started).
 * Options: --range=LO-HI (hexadecimal, [LO, HI) in the trace's addresses, i.e. where valgrind
 * loaded the program), --trace-fd=N (the descriptor the trace goes to; default 3), --sample=ON/PERIOD
 * (decimal: of every PERIOD instructions the process runs, the first ON are traced, the rest are
 * a gap, written as "G count": untraced, inside the range or not. The first instruction after a
 * traced one is still written, a branch's target; a reader drops a branch still waiting for its
 * target at a G line, and may let a gap advance its clock by less than its length, so that what
 * happens per instruction (a table cleared every N) happens per traced instruction: dlab's does,
 * lackey_trace.h).
 * Built against Debian's valgrind (its pub_tool headers and libcoregrind/libvex), as valgrind's own
 * tools are: see predictors/CMakeLists.txt. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_tooliface.h"

static ULong range_lo = 0, range_hi = 0;
static Long trace_fd = 3;
static const HChar* range_text = NULL;
static const HChar* sample_text = NULL;
static ULong sample_on = 0, sample_period = 0; /* 0: every instruction of the range is traced */
static ULong phase_left = 0;                    /* instructions left in the current phase */
static Bool phase_traced = True;
static Bool current_traced = False;             /* the last instruction's accesses are written */

/* One instruction of the process has run: whether it falls in a traced phase. */
static inline Bool sample_tick(void) {
  if (!sample_period) return True;
  if (phase_left == 0) {
    phase_traced = !phase_traced;
    phase_left = phase_traced ? sample_on : sample_period - sample_on;
  }
  --phase_left;
  return phase_traced;
}

static HChar out[1 << 20];
static Int out_used = 0;
static Bool write_failed = False;
/* A forked child (before its exec) shares the trace's descriptor: it writes nothing, neither what
 * the parent had buffered nor its own instructions, so the trace is the parent's alone. */
static Bool is_forked_child = False;

static void flush_out(void) {
  if (is_forked_child) {
    out_used = 0;
    return;
  }
  Int done = 0;
  while (done < out_used && !write_failed) {
    Int n = VG_(write)((Int)trace_fd, out + done, out_used - done);
    if (n <= 0) write_failed = True;  /* the reader has gone: said once at exit */
    else done += n;
  }
  out_used = 0;
}

static inline void put_hex(ULong v) {
  HChar digits[16];
  Int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  while (n < 8) digits[n++] = '0'; /* lackey's %08lx */
  while (n) out[out_used++] = digits[--n];
}

static inline void put_dec(ULong v) {
  HChar digits[20];
  Int n = 0;
  do {
    digits[n++] = (HChar)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) out[out_used++] = digits[--n];
}

static inline void reserve(void) {
  if (out_used > (Int)sizeof out - 64) flush_out();
}

static ULong outside = 0;          /* instructions outside the range since the last I line */
static ULong gapped = 0;           /* instructions in a sampling gap since the last I line */
static Bool last_was_inside = False;

static inline void put_count(HChar kind, ULong n) {
  reserve();
  out[out_used++] = kind;
  out[out_used++] = ' ';
  put_dec(n);
  out[out_used++] = '\n';
}

static inline void put_skipped(void) {
  if (outside) put_count('X', outside);
  if (gapped) put_count('G', gapped);
  outside = gapped = 0;
}

static inline void put_instruction(Addr a, UWord size) {
  put_skipped();
  reserve();
  out[out_used++] = 'I';
  out[out_used++] = ' ';
  out[out_used++] = ' ';
  put_hex(a);
  out[out_used++] = ',';
  put_dec(size);
  out[out_used++] = '\n';
}

static void untraced_instruction(Addr a, UWord size, Bool in_gap);

static VG_REGPARM(2) void on_inside(Addr a, UWord size) {
  if (!sample_tick()) {
    current_traced = False;
    untraced_instruction(a, size, True);
    return;
  }
  current_traced = True;
  put_instruction(a, size);
  last_was_inside = True;
}

static VG_REGPARM(2) void on_outside(Addr a, UWord size) {
  Bool traced_phase = sample_tick();
  untraced_instruction(a, size, !traced_phase);
}

static void untraced_instruction(Addr a, UWord size, Bool in_gap) {
  if (last_was_inside) {
    put_instruction(a, size);
    last_was_inside = False;
  } else if (in_gap) {
    ++gapped;
  } else {
    ++outside;
  }
}

static inline void put_access(HChar kind, Addr a, UWord size) {
  reserve();
  out[out_used++] = ' ';
  out[out_used++] = kind;
  out[out_used++] = ' ';
  put_hex(a);
  out[out_used++] = ',';
  put_dec(size);
  out[out_used++] = '\n';
}

static VG_REGPARM(2) void on_load(Addr a, UWord size) {
  if (current_traced) put_access('L', a, size);
}
static VG_REGPARM(2) void on_store(Addr a, UWord size) {
  if (current_traced) put_access('S', a, size);
}

static Bool process_option(const HChar* arg) {
  if VG_STR_CLO(arg, "--range", range_text) {
  } else if VG_STR_CLO(arg, "--sample", sample_text) {
  } else if VG_BINT_CLO(arg, "--trace-fd", trace_fd, 0, 1023) {
  } else {
    return False;
  }
  return True;
}

static void print_usage(void) {
  VG_(printf)("    --range=LO-HI     trace the code in [LO, HI) (hexadecimal addresses) [required]\n"
              "    --trace-fd=N      write the trace to descriptor N [3]\n"
              "    --sample=ON/PERIOD  trace the first ON of every PERIOD instructions (decimal, 0 < ON < PERIOD) [all]\n");
}

static void print_debug_usage(void) { VG_(printf)("    (none)\n"); }

static Bool parse_hex(const HChar** s, ULong* v) {
  const HChar* p = *s;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
  ULong x = 0;
  Int n = 0;
  for (;; ++p, ++n) {
    HChar c = *p;
    Int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) break;
    if (n >= 16) return False;
    x = x * 16 + (ULong)d;
  }
  *s = p;
  *v = x;
  return n > 0;
}

static Bool parse_dec(const HChar** s, ULong* v) {
  const HChar* p = *s;
  ULong x = 0;
  Int n = 0;
  for (; *p >= '0' && *p <= '9'; ++p, ++n) {
    if (n >= 18) return False;
    x = x * 10 + (ULong)(*p - '0');
  }
  *s = p;
  *v = x;
  return n > 0;
}

static void on_fork_child(ThreadId tid) {
  (void)tid;
  is_forked_child = True;
  out_used = 0;
}

static void post_clo_init(void) {
  VG_(atfork)(NULL, NULL, on_fork_child);
  const HChar* s = range_text;
  if (!s || !parse_hex(&s, &range_lo) || *s++ != '-' || !parse_hex(&s, &range_hi) || *s != '\0' || range_lo >= range_hi)
    VG_(fmsg_bad_option)(range_text ? range_text : "(none)", "dlabtrace needs --range=LO-HI, hexadecimal, LO < HI\n");
  if (sample_text) {
    const HChar* t = sample_text;
    if (!parse_dec(&t, &sample_on) || *t++ != '/' || !parse_dec(&t, &sample_period) || *t != '\0' || sample_on == 0 ||
        sample_on >= sample_period)
      VG_(fmsg_bad_option)(sample_text, "dlabtrace's --sample is ON/PERIOD, decimal, 0 < ON < PERIOD\n");
    phase_traced = True;
    phase_left = sample_on;
  }
}

static void add_call(IRSB* sb, const HChar* name, void* fn, IRExpr* address, Int size, IRExpr* guard) {
  IRDirty* di = unsafeIRDirty_0_N(2, name, VG_(fnptr_to_fnentry)(fn), mkIRExprVec_2(address, mkIRExpr_HWord((HWord)size)));
  if (guard) di->guard = guard;
  addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static IRSB* instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout, const VexGuestExtents* vge,
                        const VexArchInfo* archinfo_host, IRType gWordTy, IRType hWordTy) {
  (void)closure; (void)layout; (void)vge; (void)archinfo_host;
  if (gWordTy != hWordTy) VG_(tool_panic)("host/guest word size mismatch");
  IRSB* sb = deepCopyIRSBExceptStmts(in);
  Int i = 0;
  for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; ++i) addStmtToIRSB(sb, in->stmts[i]);
  Bool inside = False;  /* the current instruction's */
  for (; i < in->stmts_used; ++i) {
    IRStmt* st = in->stmts[i];
    if (!st || st->tag == Ist_NoOp) continue;
    switch (st->tag) {
      case Ist_IMark: {
        ULong a = (ULong)st->Ist.IMark.addr;
        inside = a >= range_lo && a < range_hi;
        add_call(sb, inside ? "on_inside" : "on_outside", inside ? (void*)on_inside : (void*)on_outside,
                 mkIRExpr_HWord((HWord)a), (Int)st->Ist.IMark.len, NULL);
        break;
      }
      case Ist_WrTmp:
        if (inside && st->Ist.WrTmp.data->tag == Iex_Load) {
          IRExpr* e = st->Ist.WrTmp.data;
          add_call(sb, "on_load", (void*)on_load, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), NULL);
        }
        break;
      case Ist_Store:
        if (inside) {
          IRType t = typeOfIRExpr(in->tyenv, st->Ist.Store.data);
          /* after the statement in program order; before it here is the same for the trace */
          add_call(sb, "on_store", (void*)on_store, st->Ist.Store.addr, sizeofIRType(t), NULL);
        }
        break;
      case Ist_StoreG:
        if (inside) {
          IRStoreG* g = st->Ist.StoreG.details;
          add_call(sb, "on_store", (void*)on_store, g->addr, sizeofIRType(typeOfIRExpr(in->tyenv, g->data)), g->guard);
        }
        break;
      case Ist_LoadG:
        if (inside) {
          IRLoadG* g = st->Ist.LoadG.details;
          IRType loaded = Ity_INVALID, widened = Ity_INVALID;
          typeOfIRLoadGOp(g->cvt, &widened, &loaded);
          add_call(sb, "on_load", (void*)on_load, g->addr, sizeofIRType(loaded), g->guard);
        }
        break;
      case Ist_Dirty:
        if (inside) {
          IRDirty* d = st->Ist.Dirty.details;
          if (d->mFx != Ifx_None) {
            if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) add_call(sb, "on_load", (void*)on_load, d->mAddr, d->mSize, NULL);
            if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) add_call(sb, "on_store", (void*)on_store, d->mAddr, d->mSize, NULL);
          }
        }
        break;
      case Ist_CAS:
        if (inside) {
          IRCAS* cas = st->Ist.CAS.details;
          Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo)) * (cas->dataHi ? 2 : 1);
          add_call(sb, "on_load", (void*)on_load, cas->addr, size, NULL);
          add_call(sb, "on_store", (void*)on_store, cas->addr, size, NULL);
        }
        break;
      case Ist_LLSC:
        if (inside) {
          if (st->Ist.LLSC.storedata == NULL) {
            IRType t = typeOfIRTemp(in->tyenv, st->Ist.LLSC.result);
            add_call(sb, "on_load", (void*)on_load, st->Ist.LLSC.addr, sizeofIRType(t), NULL);
          } else {
            IRType t = typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata);
            add_call(sb, "on_store", (void*)on_store, st->Ist.LLSC.addr, sizeofIRType(t), NULL);
          }
        }
        break;
      default:
        break;
    }
    addStmtToIRSB(sb, st);
  }
  return sb;
}

static void fini(Int exit_code) {
  (void)exit_code;
  put_skipped();
  flush_out();
  if (write_failed && !is_forked_child) VG_(umsg)("dlabtrace: the trace could not be written whole to descriptor %lld\n", trace_fd);
}

static void pre_clo_init(void) {
  VG_(details_name)("dlabtrace");
  VG_(details_version)(NULL);
  VG_(details_description)("lackey's memory trace of one code range (dispatchlab)");
  VG_(details_copyright_author)("dispatchlab");
  VG_(details_bug_reports_to)("the dispatchlab repository");
  VG_(details_avg_translation_sizeB)(275);
  VG_(basic_tool_funcs)(post_clo_init, instrument, fini);
  VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
