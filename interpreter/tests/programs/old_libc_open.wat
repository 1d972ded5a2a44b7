;; A WASI program as wasi-libc of the wasi_unstable era (2019) opened files, written out by hand:
;; no such libc is packaged for Debian, and a program built with it is what issue 48 item 12 ran.
;; It follows that libc's sequence as its sources read (libpreopen's po_find, cloudlibc's openat):
;;  1. the preopen map: fd_prestat_get(3), and the preopen's rights from fd_fdstat_get, where a
;;     path's directory must hold PATH_OPEN as a base right and what openat will ask for (step 3's
;;     `max`) among its inheriting rights. libpreopen's po_find compares a request with both; that
;;     a build asked for `max` there is inferred, not read: the program of issue 48 failed under
;;     --dir-rw too, where dlab's preopen had the rights wasmtime gives one save the bits past
;;     the 30 that WASI defines, which `max` (a complement) has and wasm3's grant (every bit) has;
;;  2. openat: the directory's fdstat again, its filetype a directory and the minimal rights of
;;     the access mode among its inheriting rights (O_RDONLY: FD_READ; O_WRONLY: FD_WRITE and
;;     FD_SEEK), else the libc's own ENOTCAPABLE;
;;  3. path_open asking for `max & inheriting` as base rights, `max` being every right but those
;;     that contradict the access mode (so a read asks for set_times, path_* and the like too),
;;     and the directory's inheriting rights as inheriting.
;; It reads data.txt and prints it ("read: ..."), then creates made.txt for writing and writes
;; "made" in it, printing "write: made" or "write: refused <errno>". Exit status: 0, or the errno
;; of a failed step 1-3 of the read (76: the libc's own rights check).
(module
  (import "wasi_unstable" "fd_prestat_get" (func $prestat (param i32 i32) (result i32)))
  (import "wasi_unstable" "fd_fdstat_get" (func $fdstat (param i32 i32) (result i32)))
  (import "wasi_unstable" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_unstable" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_unstable" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_unstable" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  ;; 0: prestat; 32: fdstat (filetype at 32, base at 40, inheriting at 48); 64: opened fd;
  ;; 68: byte counts; 80: iovec; 128, 144: paths; 160-: texts; 1024: the read buffer.
  (data (i32.const 128) "data.txt")
  (data (i32.const 144) "made.txt")
  (data (i32.const 160) "read: ")
  (data (i32.const 176) "write: made\n")
  (data (i32.const 192) "write: refused ")
  (data (i32.const 208) "made")
  (data (i32.const 224) "\n")

  (func $print (param $fd i32) (param $at i32) (param $len i32)
    (i32.store (i32.const 80) (local.get $at))
    (i32.store (i32.const 84) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 80) (i32.const 1) (i32.const 68))))

  (func $print_number (param $n i32)  ;; 0..999
    (i32.store8 (i32.const 240) (i32.add (i32.const 48) (i32.div_u (local.get $n) (i32.const 100))))
    (i32.store8 (i32.const 241) (i32.add (i32.const 48) (i32.rem_u (i32.div_u (local.get $n) (i32.const 10)) (i32.const 10))))
    (i32.store8 (i32.const 242) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
    (call $print (i32.const 1) (i32.const 240) (i32.const 3))
    (call $print (i32.const 1) (i32.const 224) (i32.const 1)))

  ;; Steps 1-3 for the path at $path (8 bytes), with the access mode's max and minimal rights and
  ;; oflags: the new fd at 64, or the errno.
  (func $libc_open (param $path i32) (param $oflags i32) (param $max i64) (param $min i64) (result i32)
    (local $err i32)
    ;; 1. the preopen map
    (local.set $err (call $prestat (i32.const 3) (i32.const 0)))
    (if (local.get $err) (then (return (local.get $err))))
    (local.set $err (call $fdstat (i32.const 3) (i32.const 32)))
    (if (local.get $err) (then (return (local.get $err))))
    (if (i64.ne (i64.and (i64.load (i32.const 40)) (i64.const 8192)) (i64.const 8192))  ;; PATH_OPEN
      (then (return (i32.const 76))))
    (if (i64.ne (i64.and (i64.load (i32.const 48)) (local.get $max)) (local.get $max))
      (then (return (i32.const 76))))
    ;; 2. openat's checks
    (local.set $err (call $fdstat (i32.const 3) (i32.const 32)))
    (if (local.get $err) (then (return (local.get $err))))
    (if (i32.ne (i32.load8_u (i32.const 32)) (i32.const 3)) (then (return (i32.const 54))))  ;; ENOTDIR
    (if (i64.ne (i64.and (i64.load (i32.const 48)) (local.get $min)) (local.get $min))
      (then (return (i32.const 76))))
    ;; 3. path_open with max & inheriting
    (call $path_open (i32.const 3) (i32.const 1) (local.get $path) (i32.const 8) (local.get $oflags)
      (i64.and (local.get $max) (i64.load (i32.const 48))) (i64.load (i32.const 48)) (i32.const 0) (i32.const 64)))

  (func (export "_start")
    (local $err i32) (local $fd i32) (local $n i32)
    ;; O_RDONLY: max = ~(DATASYNC | READ | WRITE | ALLOCATE | READDIR | FILESTAT_SET_SIZE) | READ | READDIR
    (local.set $err (call $libc_open (i32.const 128) (i32.const 0)
      (i64.or (i64.xor (i64.const 4211011) (i64.const -1)) (i64.const 16386)) (i64.const 2)))
    (if (local.get $err) (then (call $exit (local.get $err))))
    (local.set $fd (i32.load (i32.const 64)))
    (i32.store (i32.const 88) (i32.const 1024))
    (i32.store (i32.const 92) (i32.const 256))
    (local.set $err (call $fd_read (local.get $fd) (i32.const 88) (i32.const 1) (i32.const 68)))
    (if (local.get $err) (then (call $exit (local.get $err))))
    (local.set $n (i32.load (i32.const 68)))
    (call $print (i32.const 1) (i32.const 160) (i32.const 6))
    (call $print (i32.const 1) (i32.const 1024) (local.get $n))
    ;; O_WRONLY | O_CREAT: max = the same | DATASYNC | WRITE | ALLOCATE | FILESTAT_SET_SIZE; min = WRITE | SEEK
    (local.set $err (call $libc_open (i32.const 144) (i32.const 1)
      (i64.or (i64.xor (i64.const 4211011) (i64.const -1)) (i64.const 4194625)) (i64.const 68)))
    (if (local.get $err)
      (then
        (call $print (i32.const 1) (i32.const 192) (i32.const 15))
        (call $print_number (local.get $err))
        (return)))
    (call $print (i32.load (i32.const 64)) (i32.const 208) (i32.const 4))
    (call $print (i32.const 1) (i32.const 176) (i32.const 12))))
