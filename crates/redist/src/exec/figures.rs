//! What a rank needs to know of every other rank to set up its part of a
//! redistribution: a few maxima over the ranks, carried by the agreement
//! all-reduce (no collective of their own).

use redist_plan::plan::RankPlan;

/// Maxima over every rank of a redistribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Figures {
    /// The most messages a rank sends or receives: the communication
    /// graph's maximum degree.
    pub max_degree: usize,
    /// The most elements a rank sends or receives.
    pub max_volume: usize,
    /// Whether some rank sends a message to another.
    pub messages: bool,
    /// Whether every rank's counts and displacements fit MPI's `i32` (one
    /// `MPI_Alltoallv` can address them).
    pub counts_fit: bool,
    /// The most elements in one message between two ranks.
    pub max_message: usize,
}

/// Figures in an all-reduce: maxima of these words.
pub(crate) type Words = [u64; 5];

impl Figures {
    /// This rank's words for `plan`.
    pub fn of(plan: &RankPlan) -> Words {
        let (sent, received) = (plan.elements_sent(), plan.elements_received());
        let small = |n: usize| n <= i32::MAX as usize;
        let fits = plan
            .sends()
            .iter()
            .chain(plan.recvs())
            .all(|l| small(l.len))
            && small(sent + plan.kept())
            && small(received + plan.kept());
        let word = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        [
            word(plan.sends().len().max(plan.recvs().len())),
            word(sent.max(received)),
            u64::from(!plan.sends().is_empty()),
            u64::from(!fits),
            word(plan.sends().iter().map(|l| l.len).max().unwrap_or(0)),
        ]
    }

    /// The figures from the maxima over the ranks of [`of`](Self::of)'s
    /// words.
    pub fn from_maxima(w: Words) -> Figures {
        let size = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
        Figures {
            max_degree: size(w[0]),
            max_volume: size(w[1]),
            messages: w[2] != 0,
            counts_fit: w[3] == 0,
            max_message: size(w[4]),
        }
    }
}
