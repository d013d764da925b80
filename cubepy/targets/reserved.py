"""Names a user identifier must not take in the generated source, per target.

codegen/names.py mangles every user name against the union of these sets (so a kernel
reads the same in CUDA, WGSL and MSL); the lists say where each name comes from, so a
new target or header adds its names here. Names starting with `_` or containing `__`
are mangled by rule (reserved in C++ and WGSL), as are names with the generator's prefix
`cube_`, so neither appears below.
"""
from __future__ import annotations

import functools
import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# C and C++ keywords (C++23), alternative operator spellings, contextual keywords.
CPP_KEYWORDS = _words("""
alignas alignof and and_eq asm atomic_cancel atomic_commit atomic_noexcept auto bitand
bitor bool break case catch char char8_t char16_t char32_t class compl concept const
consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for
friend goto if import inline int long module mutable namespace new noexcept not not_eq
nullptr operator or or_eq override final private protected public reflexpr register
reinterpret_cast requires restrict return short signed sizeof static static_assert
static_cast struct switch synchronized template this thread_local throw true try typedef
typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
main
""")

# Types, functions and namespaces the C-like targets declare or the generator calls:
# C99 math (with f/l variants, added below), glibc and CUDA math extensions, fixed-width
# integer and vector types, CUDA position builtins, atomics and intrinsics.
_MATH_BASE = """
acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2
exp10 expm1 fabs fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint
llround log log10 log1p log2 logb lrint lround modf nan nearbyint nextafter nexttoward pow
pow10 remainder remquo rint round scalb scalbln scalbn sin sincos sinh sqrt tan tanh
tgamma trunc j0 j1 jn y0 y1 yn gamma drem finite significand rsqrt rcbrt sinpi cospi
tanpi sincospi erfinv erfcinv erfcx normcdf normcdfinv norm norm3d norm4d rnorm rnorm3d
rnorm4d rhypot cyl_bessel_i0 cyl_bessel_i1 fdivide powr fract
"""
MATH = frozenset(f"{base}{suffix}" for base in _MATH_BASE.split() for suffix in ("", "f", "l"))

_VECTOR_BASES = ("char uchar short ushort int uint long ulong longlong ulonglong float "
                 "double half bfloat bool").split()
VECTOR_TYPES = frozenset(f"{b}{k}" for b in _VECTOR_BASES for k in (1, 2, 3, 4))

C_LIBRARY = _words("""
abs labs llabs min max umin umax llmin llmax ullmin ullmax fminf fmaxf isnan isinf
isfinite isnormal signbit fpclassify isgreater isless isunordered
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t
intmax_t uintmax_t size_t ssize_t ptrdiff_t nullptr_t max_align_t float_t double_t
uint ushort uchar ulong half half2 nv_bfloat16 nv_bfloat162 dim3
std cuda cub thrust nvcuda cooperative_groups
printf malloc free memcpy memset memcmp memmove assert clock clock64 errno stdin stdout
stderr offsetof alloca linux unix NULL EOF
threadIdx blockIdx blockDim gridDim warpSize
atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS
atomicAnd atomicOr atomicXor atomicAdd_block atomicAdd_system atomicCAS_block
atomicCAS_system atomicExch_block atomicExch_system
""")

# Functions of the C library a CUDA translation unit declares at global scope: only the
# kernel's own name (the one global a user names) must avoid them.
C_GLOBALS = _words("""
fprintf sprintf snprintf vprintf vsprintf vsnprintf puts putchar getchar fopen fclose
fread fwrite fflush fgets fputs fputc fgetc scanf sscanf fscanf remove rename tmpfile
perror calloc realloc abort exit atexit quick_exit getenv system div ldiv lldiv atoi
atol atoll atof strtol strtoul strtoll strtoull strtod strtof qsort bsearch rand srand
random srandom aligned_alloc posix_memalign memchr strlen strcpy strncpy strcat strncat
strcmp strncmp strchr strrchr strstr strtok strdup strerror index rindex bzero bcopy
time difftime mktime gmtime localtime strftime asctime ctime nanosleep sleep usleep
isalpha isdigit isspace isupper islower toupper tolower isalnum isprint ispunct isxdigit
iscntrl isgraph isblank signal raise setjmp longjmp read write open close select pselect
poll
""")

# Macros that the headers of a CUDA translation unit (cuda_runtime, cuda_fp16, cuda_bf16,
# cooperative_groups; glibc and libstdc++ underneath) define: a name equal to one of them
# would be rewritten by the preprocessor. tests/test_source_injection.py checks this list
# against `nvcc -E -dM`; families with a prefix are matched by MACRO_PREFIX instead.
CUDA_MACROS = _words("""
ADJ_ESTERROR ADJ_FREQUENCY ADJ_MAXERROR ADJ_MICRO ADJ_NANO ADJ_OFFSET ADJ_OFFSET_SINGLESHOT
ADJ_OFFSET_SS_READ ADJ_SETOFFSET ADJ_STATUS ADJ_TAI ADJ_TICK ADJ_TIMECONST
AIO_PRIO_DELTA_MAX BC_BASE_MAX BC_DIM_MAX BC_SCALE_MAX BC_STRING_MAX BIG_ENDIAN BOOL_MAX
BOOL_WIDTH BUFSIZ BYTE_ORDER CCCL_DEPRECATED CCCL_DEPRECATED_BECAUSE
CCCL_DETAIL_KERNEL_ATTRIBUTES CCCL_MAJOR_VERSION CCCL_MINOR_VERSION CCCL_PATCH_VERSION
CCCL_VERSION CHARCLASS_NAME_MAX CHAR_BIT CHAR_MAX CHAR_MIN CHAR_WIDTH CLOCKS_PER_SEC
CLOCK_BOOTTIME CLOCK_BOOTTIME_ALARM CLOCK_MONOTONIC CLOCK_MONOTONIC_COARSE
CLOCK_MONOTONIC_RAW CLOCK_PROCESS_CPUTIME_ID CLOCK_REALTIME CLOCK_REALTIME_ALARM
CLOCK_REALTIME_COARSE CLOCK_TAI CLOCK_THREAD_CPUTIME_ID CLONE_CHILD_CLEARTID
CLONE_CHILD_SETTID CLONE_DETACHED CLONE_FILES CLONE_FS CLONE_IO CLONE_NEWCGROUP CLONE_NEWIPC
CLONE_NEWNET CLONE_NEWNS CLONE_NEWPID CLONE_NEWTIME CLONE_NEWUSER CLONE_NEWUTS CLONE_PARENT
CLONE_PARENT_SETTID CLONE_PIDFD CLONE_PTRACE CLONE_SETTLS CLONE_SIGHAND CLONE_SYSVSEM
CLONE_THREAD CLONE_UNTRACED CLONE_VFORK CLONE_VM COLL_WEIGHTS_MAX CPU_ALLOC CPU_ALLOC_SIZE
CPU_AND CPU_AND_S CPU_CLR CPU_CLR_S CPU_COUNT CPU_COUNT_S CPU_EQUAL CPU_EQUAL_S CPU_FREE
CPU_ISSET CPU_ISSET_S CPU_OR CPU_OR_S CPU_SET CPU_SETSIZE CPU_SET_S CPU_XOR CPU_XOR_S
CPU_ZERO CPU_ZERO_S CSIGNAL CU_UUID_HAS_BEEN_DEFINED DBL_DECIMAL_DIG DBL_DIG DBL_EPSILON
DBL_HAS_SUBNORM DBL_MANT_DIG DBL_MAX DBL_MAX_10_EXP DBL_MAX_EXP DBL_MIN DBL_MIN_10_EXP
DBL_MIN_EXP DBL_TRUE_MIN DECIMAL_DIG DELAYTIMER_MAX E2BIG EACCES EADDRINUSE EADDRNOTAVAIL
EADV EAFNOSUPPORT EAGAIN EALREADY EBADE EBADF EBADFD EBADMSG EBADR EBADRQC EBADSLT EBFONT
EBUSY ECANCELED ECHILD ECHRNG ECOMM ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDEADLOCK
EDESTADDRREQ EDOM EDOTDOT EDQUOT EEXIST EFAULT EFBIG EHOSTDOWN EHOSTUNREACH EHWPOISON EIDRM
EILSEQ EINPROGRESS EINTR EINVAL EIO EISCONN EISDIR EISNAM EKEYEXPIRED EKEYREJECTED
EKEYREVOKED EL2HLT EL2NSYNC EL3HLT EL3RST ELIBACC ELIBBAD ELIBEXEC ELIBMAX ELIBSCN ELNRNG
ELOOP EMEDIUMTYPE EMFILE EMLINK EMSGSIZE EMULTIHOP ENAMETOOLONG ENAVAIL ENETDOWN ENETRESET
ENETUNREACH ENFILE ENOANO ENOBUFS ENOCSI ENODATA ENODEV ENOENT ENOEXEC ENOKEY ENOLCK ENOLINK
ENOMEDIUM ENOMEM ENOMSG ENONET ENOPKG ENOPROTOOPT ENOSPC ENOSR ENOSTR ENOSYS ENOTBLK
ENOTCONN ENOTDIR ENOTEMPTY ENOTNAM ENOTRECOVERABLE ENOTSOCK ENOTSUP ENOTTY ENOTUNIQ ENXIO
EOF EOPNOTSUPP EOVERFLOW EOWNERDEAD EPERM EPFNOSUPPORT EPIPE EPROTO EPROTONOSUPPORT
EPROTOTYPE ERANGE EREMCHG EREMOTE EREMOTEIO ERESTART ERFKILL EROFS ESHUTDOWN ESOCKTNOSUPPORT
ESPIPE ESRCH ESRMNT ESTALE ESTRPIPE ETIME ETIMEDOUT ETOOMANYREFS ETXTBSY EUCLEAN EUNATCH
EUSERS EWOULDBLOCK EXDEV EXFULL EXIT_FAILURE EXIT_SUCCESS EXPR_NEST_MAX FD_CLR FD_ISSET
FD_SET FD_SETSIZE FD_ZERO FILENAME_MAX FLT_DECIMAL_DIG FLT_DIG FLT_EPSILON FLT_EVAL_METHOD
FLT_HAS_SUBNORM FLT_MANT_DIG FLT_MAX FLT_MAX_10_EXP FLT_MAX_EXP FLT_MIN FLT_MIN_10_EXP
FLT_MIN_EXP FLT_RADIX FLT_ROUNDS FLT_TRUE_MIN FOPEN_MAX FP_ILOGB0 FP_ILOGBNAN FP_INFINITE
FP_INT_DOWNWARD FP_INT_TONEAREST FP_INT_TONEARESTFROMZERO FP_INT_TOWARDZERO FP_INT_UPWARD
FP_LLOGB0 FP_LLOGBNAN FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO HOST_NAME_MAX HUGE_VAL HUGE_VALF
HUGE_VALL HUGE_VAL_F32 HUGE_VAL_F32X HUGE_VAL_F64 HUGE_VAL_F64X IF_DEVICE_OR_CUDACC INFINITY
INT16_C INT16_MAX INT16_MIN INT16_WIDTH INT32_C INT32_MAX INT32_MIN INT32_WIDTH INT64_C
INT64_MAX INT64_MIN INT64_WIDTH INT8_C INT8_MAX INT8_MIN INT8_WIDTH INTMAX_C INTMAX_MAX
INTMAX_MIN INTMAX_WIDTH INTPTR_MAX INTPTR_MIN INTPTR_WIDTH INT_FAST16_MAX INT_FAST16_MIN
INT_FAST16_WIDTH INT_FAST32_MAX INT_FAST32_MIN INT_FAST32_WIDTH INT_FAST64_MAX
INT_FAST64_MIN INT_FAST64_WIDTH INT_FAST8_MAX INT_FAST8_MIN INT_FAST8_WIDTH INT_LEAST16_MAX
INT_LEAST16_MIN INT_LEAST16_WIDTH INT_LEAST32_MAX INT_LEAST32_MIN INT_LEAST32_WIDTH
INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST64_WIDTH INT_LEAST8_MAX INT_LEAST8_MIN
INT_LEAST8_WIDTH INT_MAX INT_MIN INT_WIDTH IOV_MAX LC_ADDRESS LC_ADDRESS_MASK LC_ALL
LC_ALL_MASK LC_COLLATE LC_COLLATE_MASK LC_CTYPE LC_CTYPE_MASK LC_GLOBAL_LOCALE
LC_IDENTIFICATION LC_IDENTIFICATION_MASK LC_MEASUREMENT LC_MEASUREMENT_MASK LC_MESSAGES
LC_MESSAGES_MASK LC_MONETARY LC_MONETARY_MASK LC_NAME LC_NAME_MASK LC_NUMERIC
LC_NUMERIC_MASK LC_PAPER LC_PAPER_MASK LC_TELEPHONE LC_TELEPHONE_MASK LC_TIME LC_TIME_MASK
LDBL_DECIMAL_DIG LDBL_DIG LDBL_EPSILON LDBL_HAS_SUBNORM LDBL_MANT_DIG LDBL_MAX
LDBL_MAX_10_EXP LDBL_MAX_EXP LDBL_MIN LDBL_MIN_10_EXP LDBL_MIN_EXP LDBL_TRUE_MIN
LIBCUDACXX_ATOMIC_BOOL_LOCK_FREE LIBCUDACXX_ATOMIC_CHAR16_T_LOCK_FREE
LIBCUDACXX_ATOMIC_CHAR32_T_LOCK_FREE LIBCUDACXX_ATOMIC_CHAR_LOCK_FREE
LIBCUDACXX_ATOMIC_FLAG_INIT LIBCUDACXX_ATOMIC_INT_LOCK_FREE
LIBCUDACXX_ATOMIC_LLONG_LOCK_FREE LIBCUDACXX_ATOMIC_LONG_LOCK_FREE
LIBCUDACXX_ATOMIC_POINTER_LOCK_FREE LIBCUDACXX_ATOMIC_SHORT_LOCK_FREE
LIBCUDACXX_ATOMIC_VAR_INIT LIBCUDACXX_ATOMIC_WCHAR_T_LOCK_FREE LIBCUDACXX_COMP_DEPR_IMPL
LIBCUDACXX_DIALECT_DEPRECATION LINE_MAX LITTLE_ENDIAN LLONG_MAX LLONG_MIN LLONG_WIDTH
LOGIN_NAME_MAX LONG_BIT LONG_LONG_MAX LONG_LONG_MIN LONG_MAX LONG_MIN LONG_WIDTH L_ctermid
L_cuserid L_tmpnam MATH_ERREXCEPT MATH_ERRNO MAXFLOAT MAX_CANON MAX_INPUT MB_CUR_MAX
MB_LEN_MAX MOD_CLKA MOD_CLKB MOD_ESTERROR MOD_FREQUENCY MOD_MAXERROR MOD_MICRO MOD_NANO
MOD_OFFSET MOD_STATUS MOD_TAI MOD_TIMECONST MQ_PRIO_MAX NAME_MAX NAN NFDBITS NGROUPS_MAX
NL_ARGMAX NL_LANGMAX NL_MSGMAX NL_NMAX NL_SETMAX NL_TEXTMAX NULL NZERO PATH_MAX PDP_ENDIAN
PIPE_BUF PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP PTHREAD_ATTR_NO_SIGMASK_NP
PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_CANCELED PTHREAD_CANCEL_ASYNCHRONOUS
PTHREAD_CANCEL_DEFERRED PTHREAD_CANCEL_DISABLE PTHREAD_CANCEL_ENABLE
PTHREAD_COND_INITIALIZER PTHREAD_CREATE_DETACHED PTHREAD_CREATE_JOINABLE
PTHREAD_DESTRUCTOR_ITERATIONS PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP PTHREAD_EXPLICIT_SCHED
PTHREAD_INHERIT_SCHED PTHREAD_KEYS_MAX PTHREAD_MUTEX_INITIALIZER PTHREAD_ONCE_INIT
PTHREAD_PROCESS_PRIVATE PTHREAD_PROCESS_SHARED PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
PTHREAD_RWLOCK_INITIALIZER PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
PTHREAD_SCOPE_PROCESS PTHREAD_SCOPE_SYSTEM PTHREAD_STACK_MIN PTRDIFF_MAX PTRDIFF_MIN
PTRDIFF_WIDTH P_tmpdir RAND_MAX RENAME_EXCHANGE RENAME_NOREPLACE RENAME_WHITEOUT RE_DUP_MAX
RTSIG_MAX SCHAR_MAX SCHAR_MIN SCHAR_WIDTH SCHED_BATCH SCHED_DEADLINE SCHED_FIFO SCHED_IDLE
SCHED_ISO SCHED_OTHER SCHED_RESET_ON_FORK SCHED_RR SEEK_CUR SEEK_DATA SEEK_END SEEK_HOLE
SEEK_SET SEM_VALUE_MAX SHRT_MAX SHRT_MIN SHRT_WIDTH SIG_ATOMIC_MAX SIG_ATOMIC_MIN
SIG_ATOMIC_WIDTH SIZE_MAX SIZE_WIDTH SNAN SNANF SNANF32 SNANF32X SNANF64 SNANF64X SNANL
SSIZE_MAX STA_CLK STA_CLOCKERR STA_DEL STA_FLL STA_FREQHOLD STA_INS STA_MODE STA_NANO
STA_PLL STA_PPSERROR STA_PPSFREQ STA_PPSJITTER STA_PPSSIGNAL STA_PPSTIME STA_PPSWANDER
STA_RONLY STA_UNSYNC TIMER_ABSTIME TIME_UTC TMP_MAX TTY_NAME_MAX UCHAR_MAX UCHAR_WIDTH
UINT16_C UINT16_MAX UINT16_WIDTH UINT32_C UINT32_MAX UINT32_WIDTH UINT64_C UINT64_MAX
UINT64_WIDTH UINT8_C UINT8_MAX UINT8_WIDTH UINTMAX_C UINTMAX_MAX UINTMAX_WIDTH UINTPTR_MAX
UINTPTR_WIDTH UINT_FAST16_MAX UINT_FAST16_WIDTH UINT_FAST32_MAX UINT_FAST32_WIDTH
UINT_FAST64_MAX UINT_FAST64_WIDTH UINT_FAST8_MAX UINT_FAST8_WIDTH UINT_LEAST16_MAX
UINT_LEAST16_WIDTH UINT_LEAST32_MAX UINT_LEAST32_WIDTH UINT_LEAST64_MAX UINT_LEAST64_WIDTH
UINT_LEAST8_MAX UINT_LEAST8_WIDTH UINT_MAX UINT_WIDTH ULLONG_MAX ULLONG_WIDTH ULONG_LONG_MAX
ULONG_MAX ULONG_WIDTH USHRT_MAX USHRT_WIDTH WCHAR_MAX WCHAR_MIN WCHAR_WIDTH WCONTINUED WEOF
WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WINT_MAX WINT_MIN
WINT_WIDTH WNOHANG WNOWAIT WORD_BIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED XATTR_LIST_MAX
XATTR_NAME_MAX XATTR_SIZE_MAX alloca assert assert_perror be16toh be32toh be64toh errno
htobe16 htobe32 htobe64 htole16 htole32 htole64 isalnum_l isalpha_l isascii isascii_l
isblank_l iscntrl_l isdigit_l isgraph_l islower_l isprint_l ispunct_l isspace_l issubnormal
isupper_l isxdigit_l le16toh le32toh le64toh linux math_errhandling offsetof
pthread_cleanup_pop pthread_cleanup_pop_restore_np pthread_cleanup_push
pthread_cleanup_push_defer_np sched_priority stderr stdin stdout strdupa strndupa toascii
toascii_l unix
""")
# HUGE_VAL_F*/SNANF*: glibc adds one per floating type it knows (_Float128 on the
# GPU machine's host headers, not on every host).
MACRO_PREFIX = re.compile(r"^(cuda[A-Z]|CUDA|NV_|M_[0-9A-Z]|LIBCUDACXX|CCCL|HUGE_VAL_F|SNANF)")

# Metal Shading Language: metal_stdlib functions and types, address spaces, attribute
# names, and its math-constant macros (M_*_F / M_*_H match MACRO_PREFIX).
MSL_KEYWORDS = _words("""
metal kernel vertex fragment device constant threadgroup thread threadgroup_imageblock
ray_data object_data visible stitchable
""")
MSL_NAMES = _words("""
bfloat ulong uchar ushort absdiff addsat all any
as_type clamp clz ctz extract_bits insert_bits hadd rhadd madhi madsat max3 min3 median3
fmax3 fmin3 fmedian3 mulhi popcount reverse_bits rotate select sign smoothstep step
subsat saturate mix divide precise fast distance dot cross length normalize reflect
refract faceforward determinant transpose
simd_sum simd_product simd_min simd_max simd_all simd_any simd_and simd_or simd_xor
simd_prefix_inclusive_sum simd_prefix_exclusive_sum simd_prefix_inclusive_product
simd_prefix_exclusive_product simd_broadcast simd_broadcast_first simd_shuffle
simd_shuffle_xor simd_shuffle_up simd_shuffle_down simd_shuffle_rotate_up
simd_shuffle_rotate_down simd_ballot simd_active_threads_mask simd_is_first
quad_sum quad_broadcast quad_shuffle quad_shuffle_xor quad_shuffle_up quad_shuffle_down
threadgroup_barrier simdgroup_barrier mem_flags mem_none mem_device mem_threadgroup
mem_texture memory_order memory_order_relaxed atomic atomic_int atomic_uint atomic_bool
atomic_float atomic_ulong atomic_load_explicit atomic_store_explicit
atomic_exchange_explicit atomic_compare_exchange_weak_explicit atomic_fetch_add_explicit
atomic_fetch_sub_explicit atomic_fetch_min_explicit atomic_fetch_max_explicit
atomic_fetch_and_explicit atomic_fetch_or_explicit atomic_fetch_xor_explicit
texture1d texture2d texture3d texturecube texture2d_array depth2d sampler access
packed_float2 packed_float3 packed_float4 packed_half2 packed_half3 packed_half4
buffer texture thread_position_in_grid thread_position_in_threadgroup
threadgroup_position_in_grid threads_per_threadgroup threadgroups_per_grid
threads_per_grid thread_index_in_simdgroup threads_per_simdgroup
simd_vote atomic_thread_fence thread_scope thread_scope_thread thread_scope_simdgroup
thread_scope_threadgroup thread_scope_device memory_order_seq_cst
thread_index_in_threadgroup simdgroup_index_in_threadgroup simdgroups_per_threadgroup
thread_index_in_quadgroup quadgroup_index_in_threadgroup quadgroups_per_threadgroup
dispatch_threads_per_threadgroup dispatch_quadgroups_per_threadgroup
dispatch_simdgroups_per_threadgroup grid_origin grid_size
MAXFLOAT HUGE_VALF HUGE_VALH HUGE_VAL INFINITY NAN FP_ILOGB0 FP_ILOGBNAN
""") | frozenset(f"{kind}_{what}" for kind in ("FLT", "HALF", "DBL", "BFLOAT", "LDBL")
                for what in ("DIG", "MANT_DIG", "MAX_10_EXP", "MAX_EXP", "MIN_10_EXP",
                             "MIN_EXP", "RADIX", "MAX", "MIN", "EPSILON", "DECIMAL_DIG",
                             "TRUE_MIN", "HAS_SUBNORM", "NORM_MAX", "NORM_MIN", "ROUNDS",
                             "EVAL_METHOD"))

# WGSL: keywords and reserved words (the WGSL spec and naga's list), then built-in
# functions, predeclared types and enumerants (a module-scope buffer named `read` would
# shadow the access mode of every `var<storage, read>`).
WGSL_KEYWORDS = _words("""
alias break case const const_assert continue continuing default diagnostic discard else
enable false fn for if let loop override requires return struct switch true var while
CompileShader ComputeShader DomainShader GeometryShader Hullshader NULL Self abstract
active alignas alignof as asm asm_fragment assert async attribute auto await become
binding_array cast catch class co_await co_return co_yield coherent column_major common
compile compile_fragment concept const_cast consteval constexpr constinit crate debugger
decltype delete demote demote_to_helper do dynamic_cast enum explicit export extends
extern external fallthrough filter final finally friend from fxgroup get goto
groupshared handle highp impl implements import inline inout instanceof interface layout
lowp macro macro_rules match mediump meta mod module move mut mutable namespace new nil
noexcept noinline nointerpolation noperspective null nullptr of operator package
packoffset partition pass patch pixelfragment precise precision premerge priv protected
pub public readonly ref regardless register reinterpret_cast require resource restrict
self set shared signed sizeof smooth snorm static static_assert static_cast std
subroutine super target template this thread_local throw trait try type typedef typeid
typename typeof union unless unorm unsafe unsized use using varying virtual volatile
wgsl where with writeonly yield do_not_optimize dyn row_major samper
""")
WGSL_BUILTINS = _words("""
array atomic bool f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 ptr sampler
sampler_comparison texture_1d texture_2d texture_2d_array texture_3d texture_cube
texture_cube_array texture_multisampled_2d texture_storage_1d texture_storage_2d
texture_storage_2d_array texture_storage_3d texture_depth_2d texture_depth_2d_array
texture_depth_cube texture_depth_cube_array texture_depth_multisampled_2d
texture_external vec2 vec3 vec4
read write read_write function private workgroup uniform storage
rgba8unorm rgba8snorm rgba8uint rgba8sint rgba16uint rgba16sint rgba16float r32uint
r32sint r32float rg32uint rg32sint rg32float rgba32uint rgba32sint rgba32float bgra8unorm
abs acos acosh asin asinh atan atanh atan2 ceil clamp cos cosh cross degrees determinant
distance dot dot4I8Packed dot4U8Packed exp exp2 faceForward floor fma fract frexp
inverseSqrt ldexp length log log2 max min mix modf normalize pow quantizeToF16 radians
reflect refract reverseBits round saturate sign sin sinh smoothstep sqrt step tan tanh
transpose trunc select arrayLength all any bitcast countLeadingZeros countOneBits
countTrailingZeros extractBits firstLeadingBit firstTrailingBit insertBits
atomicLoad atomicStore atomicAdd atomicSub atomicMax atomicMin atomicAnd atomicOr
atomicXor atomicExchange atomicCompareExchangeWeak workgroupBarrier storageBarrier
textureBarrier workgroupUniformLoad dpdx dpdxCoarse dpdxFine dpdy dpdyCoarse dpdyFine
fwidth fwidthCoarse fwidthFine pack4x8snorm pack4x8unorm pack4xI8 pack4xU8 pack4xI8Clamp
pack4xU8Clamp pack2x16snorm pack2x16unorm pack2x16float unpack4x8snorm unpack4x8unorm
unpack4xI8 unpack4xU8 unpack2x16snorm unpack2x16unorm unpack2x16float textureDimensions
textureGather textureGatherCompare textureLoad textureNumLayers textureNumLevels
textureNumSamples textureSample textureSampleBias textureSampleCompare
textureSampleCompareLevel textureSampleGrad textureSampleLevel textureSampleBaseClampToEdge
textureStore subgroupAdd subgroupMul subgroupMin subgroupMax subgroupAnd subgroupOr
subgroupXor subgroupAll subgroupAny subgroupBroadcast subgroupBroadcastFirst
subgroupBallot subgroupElect subgroupShuffle subgroupShuffleXor subgroupShuffleUp
subgroupShuffleDown subgroupInclusiveAdd subgroupExclusiveAdd subgroupInclusiveMul
subgroupExclusiveMul quadBroadcast quadSwapX quadSwapY quadSwapDiagonal
subgroupBarrier
""") | frozenset(f"vec{k}{t}" for k in (2, 3, 4) for t in "iufh") | frozenset(
    f"mat{c}x{r}{t}" for c in (2, 3, 4) for r in (2, 3, 4) for t in ("", "f", "h"))

# Names the generator itself gives things in a kernel's scope besides its `cube_` ones:
# the info struct parameter, the WGSL entry point and its position lets.
GENERATED = _words("info main absolute_pos absolute_pos_x absolute_pos_y absolute_pos_z")
# Parameter and local names of WGSL's per-buffer accessor helpers (wgsl_memory.py): a
# module-scope buffer or shared array so named would be hidden inside them.
WGSL_HELPER_LOCALS = _words("i v expected old r want")

# Reserved for every target: keywords of all three languages, the position builtins and
# scalar types of each, and the generator's own names, so that a kernel's names read the
# same in every target.
COMMON = (CPP_KEYWORDS | WGSL_KEYWORDS | MSL_KEYWORDS | VECTOR_TYPES | GENERATED
          | _words("threadIdx blockIdx blockDim gridDim warpSize min max abs NULL uint ushort"
                   " uchar ulong half bfloat size_t ptrdiff_t atomic"))
# Library names, built-ins and macros a name must avoid in one target's source.
BY_TARGET = {
    "cuda": COMMON | MATH | C_LIBRARY | CUDA_MACROS,
    "metal": COMMON | MSL_NAMES | CUDA_MACROS,  # host macros: tests type-check MSL as C++
    "wgsl": COMMON | WGSL_BUILTINS,
}
# A target-independent name avoids them all.
BY_TARGET[None] = frozenset().union(*BY_TARGET.values())
# ... and a global (the kernel's entry name) avoids the C library's functions too.
GLOBAL_EXTRA = C_GLOBALS | MATH | C_LIBRARY


def reserved(target: str | None, global_scope: bool = False) -> frozenset[str]:
    """The names a user identifier may not keep in `target` (None: in any target). A
    target other than the built-in ones (registered later, e.g. a test's toy target)
    reserves the names common to every target and those of its Target record."""
    if target in BY_TARGET:
        return _builtin_reserved(target, global_scope)
    from . import get_target  # such a target may come and go: not cached
    names = COMMON | get_target(target).reserved
    return names | GLOBAL_EXTRA if global_scope else names


@functools.lru_cache(maxsize=None)
def _builtin_reserved(target: str | None, global_scope: bool) -> frozenset[str]:
    names = BY_TARGET[target]
    return names | GLOBAL_EXTRA if global_scope else names
