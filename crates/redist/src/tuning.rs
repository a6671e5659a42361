//! Every threshold the exchange decides by, in one place, each with what it
//! trades (the thresholds of the copies themselves — copy programs, tiles,
//! streaming stores — are `redist_plan::tuning`'s). The values were chosen by measuring on the development machine
//! (2 cores, MPICH 4.0.2); `docs/TUNING.md` says, for each, what was
//! measured, on which cases, and the command that measures it again on
//! another machine. The limits that keep plans bounded (how many process
//! pairs, runs or messages a plan may hold) are not tuning: they live with
//! the plans.
//!
//! ```
//! use redist::tuning;
//! // A derived datatype describes a side whose runs average 128 bytes or more.
//! assert_eq!(tuning::DATATYPE_MIN_RUN_BYTES, 128);
//! ```

// Copies done together.

/// Bytes of target (or of packed buffer) one portion of a pass writes
/// when the local copy and several messages' copies are done together, a
/// portion of each in turn: smaller portions keep what the copies share in
/// cache between them; larger ones walk the copy programs fewer times.
pub const PORTION_BYTES: usize = 1 << 20;

/// Runs of source storage the senders of the node read for this rank, on
/// average, at least this long make lending the target to them pay:
/// written, the sources are read front to back and each stretch written
/// is a whole run of the target; shorter runs write parts of cache lines
/// the target's other writers write too. Measured (`docs/TUNING.md`,
/// `WRITE_MIN_SOURCE_RUN_BYTES`): runs of 1–2 KiB are written in 0.67–0.87
/// of the time they are read, runs of 24–40 bytes in 0.93–1.53.
pub const WRITE_MIN_SOURCE_RUN_BYTES: usize = 64;

/// Runs of source storage this long or longer, on average, are read
/// rather than written: a reader then streams whole pages of each source,
/// and writes its target in order, which writing into gaps cannot beat
/// (`cyclic(64)² @1x2 → @2x1`, runs of 1 MiB: written 1.38× the time read).
pub const WRITE_MAX_SOURCE_RUN_BYTES: usize = 4096;

// How messages travel.

/// Largest message between two ranks, in bytes, for which `auto` combines
/// the messages between two nodes into one ([`Strategy::Combined`](crate::Strategy::Combined))
/// where the ranks span several nodes: below it a message costs mostly its
/// latency, which combining pays once per pair of nodes; above it the
/// extra copy through shared memory, and one rank per node carrying the
/// node's traffic, cost more than the latency saved.
pub const COMBINED_MAX_MESSAGE_BYTES: usize = 64 << 10;

/// Bytes of a rank's send (or receive) buffer per exchange of a batch
/// ([`Redistribution::execute_batch_into`](crate::Redistribution::execute_batch_into)):
/// a batch whose arrays need more goes in groups of arrays, one exchange
/// each. Smaller groups keep the copies in cache; larger ones pay fewer
/// latencies.
pub const BATCH_GROUP_BYTES: usize = 256 << 10;

/// Bytes a rank sends or receives per array (on the rank that moves the
/// most) from which a batch moves its arrays one by one through the
/// redistribution's own exchange, unless every source can be read straight
/// from shared storage: from there on an execution costs its copies, not
/// its latency, and the exchange of one array pipelines them in cache. At
/// 2 ranks, 16 arrays of `cyclic(8)²@1x2 → @2x1` (2 cores, MPICH): below
/// it, at 48² (4.5 KiB per rank), one exchange for the batch took 0.57× the
/// time of 16 executions; at 96² (18 KiB) 1.11×, at 256² (128 KiB) 2.0×,
/// where one by one took 0.90× and 1.02×.
pub const BATCH_ALONE_BYTES: usize = 16 << 10;

/// Largest MPI message, in bytes, a leader sends another in
/// [`Strategy::Combined`](crate::Strategy::Combined); longer ones travel in
/// pieces of this size. A message short enough for the MPI library to send
/// at once (eagerly) arrives without the sender and receiver first agreeing
/// on it, a round trip that costs more than a few more messages.
pub const COMBINED_PIECE_BYTES: usize = 16 << 10;

/// Shortest average run, in bytes, of a side of a message that the default
/// [`MinRun::Auto`](crate::MinRun::Auto) describes to MPI by a derived
/// datatype instead of packing it: shorter runs are packed faster by us
/// than walked by MPI's datatype engine.
pub const DATATYPE_MIN_RUN_BYTES: usize = 128;

/// Bytes some rank must send or receive for a redistribution under
/// [`MinRun::Auto`](crate::MinRun::Auto) to measure whether datatypes pay
/// on its communicator (a probe of 256 KiB each way, about 2 ms on 2
/// ranks here, once per communicator); below it every message is packed.
/// What datatypes can save on less than this is less than the probe costs:
/// on 2 ranks, a first 64² `pdgemr2d`-like call spent 2.1 ms of its 2.7 ms
/// in the probe.
pub const CALIBRATE_MIN_BYTES: usize = 256 << 10;

/// Largest ratio of the time to send a probe message described by a
/// derived datatype to the time to pack, send and unpack it, over the ranks
/// of a communicator, at which the default
/// [`MinRun::Auto`](crate::MinRun::Auto) still describes messages by
/// datatypes on it (measured once per communicator: `exec/calibrate.rs`).
pub const TYPED_MAX_RATIO: f64 = 1.0;

/// The probe's first timed exchange (after the warm-up) decides alone
/// where some rank found the probe typed slower than packed by more than
/// this: the other timed exchanges would not bring the ratio under
/// [`TYPED_MAX_RATIO`]. Under MPICH here that exchange's ratio is 2.6–2.9
/// (the later ones 1.6–5.4), and the probe takes two exchanges of each
/// kind instead of four.
pub const TYPED_DECISIVE_RATIO: f64 = 1.5;

/// How many times faster one way of routing an `async` redistribution's
/// messages (packed, or described by derived datatypes) must be than the
/// other after two tries each for its trial to end there
/// (`exec/asynchronous/trial.rs`); closer ways are tried twice more each.
/// On 2 emulated nodes of 2 ranks, one core each, one execution's time
/// varied by up to 1.5× between runs; MPICH's typed sends ran 1.2× slower
/// than packed ones there, Open MPI's 1.3–1.4× faster.
pub const ROUTE_TRIAL_CLEAR: f64 = 1.25;

/// Shortest average source run, in elements, that the default
/// [`MinRun::Auto`](crate::MinRun::Auto) of
/// [`Options::direct_min_run`](crate::Options::direct_min_run) sends as one
/// MPI message per run straight from source storage (`async` only): fewer,
/// longer messages skip the packing; many short ones cost more in MPI's
/// per-message overhead than the packing saves.
pub const DIRECT_MIN_RUN: usize = 4096;

/// Most MPI messages one message may be sent as, run by run, straight from
/// source storage: more would cost more in per-message overhead (and in
/// receive requests) than packing.
pub const SOURCE_RUNS_MAX: usize = 4096;

/// Bytes per piece of a packed `async` message: pieces are packed, sent,
/// received and unpacked one after another, so packing, transfer and
/// unpacking overlap; smaller pieces overlap more but cost more messages.
pub const PIPELINE_BYTES: usize = 1 << 18;

/// Mappings of peers' storage a redistribution keeps besides those its
/// last execution read (node-direct copies), for executions that take
/// turns over several arrays: more map less often; each kept mapping whose
/// owner has freed the storage holds that memory until it is dropped.
pub const MAPPINGS_KEPT: usize = 32;

/// Lookups of peers' mappings between two checks for kept mappings whose
/// owner has freed the storage (one `stat` of `/proc/<pid>/fd/<fd>`
/// each): more often frees such memory sooner, at a system call per kept
/// mapping each time.
pub const MAPPINGS_CHECK_EVERY: u64 = 64;

/// Shortest `async` piece cut to end where a run of target storage ends,
/// so that pieces are received straight into target storage instead of
/// unpacked: shorter pieces cost more MPI messages; longer ones leave
/// more messages unpacked.
pub const LANDING_MIN_BYTES: usize = 128 << 10;
