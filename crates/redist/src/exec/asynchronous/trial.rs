//! Trying both ways of sending a redistribution's messages on its first
//! executions, and keeping the faster.
//!
//! Whether MPI should walk a message's runs itself (a derived datatype) or
//! be handed them packed depends on the MPI library, its build, the path
//! between the ranks and the message's shape: across two emulated nodes,
//! 8192×4096 `block,*@4x1 → *,block@1x4` ran 1.6× faster typed than packed
//! under Open MPI and 1.2× slower under MPICH (`docs/TUNING.md`). The
//! communicator's probe (`calibrate.rs`) chooses the routes of the first
//! execution; where the other choice routes some message of some rank
//! differently, the next executions try it:
//!
//! | execution | routes |
//! |---|---|
//! | 1 | the probe's |
//! | 2, 3 | the other ones |
//! | 4 | the probe's |
//! | 5 on | the faster, where one way is [`ROUTE_TRIAL_CLEAR`](crate::tuning::ROUTE_TRIAL_CLEAR) times faster than the other |
//! | else 5, 8 | the probe's |
//! | else 6, 7 | the other ones |
//! | 9 on | the faster |
//!
//! Each way's best time counts (each rank's, the slowest rank's counting),
//! so that neither pays for its first try's fresh buffers (page faults:
//! packed routes fill buffers that typed ones do not need; a first packed
//! try of 512² ran 0.6 ms against 0.1 ms later), nor for one execution
//! that the node's other work slowed: on 2 emulated nodes of 2 ranks, one
//! core each, the same packed exchange took 72 or 106 ms from one run to
//! the next, and two tries each once kept typed sends 1.2× slower. Each
//! comparison is one small all-reduce; every rank decides alike (the rule
//! is `decide::route_trial`). The
//! exchange is collective, so every rank counts the same executions.

use super::super::decide::{route_trial, TrialStep};
use super::super::route::Routes;

/// The trial of a redistribution's other routes.
pub(super) struct Trial {
    /// The routes not in use.
    other: Routes,
    /// Executions timed so far.
    runs: u8,
    /// Whether the routes in use are the other ones (not the probe's).
    trying_other: bool,
    /// This rank's best time, in seconds, with the probe's routes and with
    /// the other ones.
    best: [f64; 2],
}

/// What comes of the step before an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The trial goes on.
    Trying,
    /// The trial is over: these routes are kept.
    Kept {
        /// Whether they are the other ones (not the probe's).
        other: bool,
    },
}

impl Trial {
    /// A trial of `other` against the routes in use, the probe's.
    pub fn new(other: Routes) -> Trial {
        Trial {
            other,
            runs: 0,
            trying_other: false,
            best: [f64::INFINITY; 2],
        }
    }

    /// The routes not in use.
    pub fn other(&self) -> &Routes {
        &self.other
    }

    /// Before an execution: puts the routes it runs in `routes`, after
    /// comparing the times each time both ways have run twice more
    /// (`slowest` takes this rank's best times and gives the largest over
    /// the ranks; collective).
    pub fn before(
        &mut self,
        routes: &mut Routes,
        slowest: impl FnOnce([f64; 2]) -> [f64; 2],
    ) -> Verdict {
        let best = self.best;
        match route_trial(self.runs, || slowest(best)) {
            TrialStep::Keep { other } => {
                self.switch(routes, other);
                Verdict::Kept { other }
            }
            TrialStep::Try { other } => {
                self.switch(routes, other);
                Verdict::Trying
            }
        }
    }

    /// After an execution that took `seconds` on this rank.
    pub fn after(&mut self, seconds: f64) {
        let best = &mut self.best[usize::from(self.trying_other)];
        *best = best.min(seconds);
        self.runs = self.runs.saturating_add(1);
    }

    /// Puts the other routes in `routes` when `other`, else the probe's.
    fn switch(&mut self, routes: &mut Routes, other: bool) {
        if self.trying_other != other {
            std::mem::swap(routes, &mut self.other);
            self.trying_other = other;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::route::{Cut, Recv, Send};
    use crate::tuning::ROUTE_TRIAL_CLEAR;

    /// Routes of one packed send in chunks of `n` and no receive: told
    /// apart by `n`.
    fn routes(n: usize) -> Routes {
        Routes {
            send: vec![Send::Packed(Cut::Chunks(n))],
            recv: Vec::<Recv>::new(),
        }
    }

    fn chunk(r: &Routes) -> usize {
        match &r.send[0] {
            Send::Packed(Cut::Chunks(n)) => *n,
            _ => unreachable!(),
        }
    }

    /// Runs a trial of routes 2 against routes 1 to its end, executions
    /// taking `times(routes in use, how many times they ran before)`
    /// seconds, `slowest` standing for the other ranks: the routes each
    /// execution ran (the last one the first with the routes kept), and
    /// the verdict.
    fn trial_with(
        times: impl Fn(usize, usize) -> f64,
        slowest: impl Fn([f64; 2]) -> [f64; 2],
    ) -> (Vec<usize>, Verdict) {
        let mut in_use = routes(1);
        let mut trial = Trial::new(routes(2));
        let mut ran = Vec::new();
        for _ in 0..12 {
            let verdict = trial.before(&mut in_use, &slowest);
            let r = chunk(&in_use);
            if verdict != Verdict::Trying {
                ran.push(r);
                return (ran, verdict);
            }
            trial.after(times(r, ran.iter().filter(|&&x| x == r).count()));
            ran.push(r);
        }
        panic!("the trial did not end: ran {ran:?}");
    }

    /// [`trial_with`] on one rank, each routes' executions taking
    /// `times(routes)` seconds.
    fn run(times: impl Fn(usize) -> f64) -> (Vec<usize>, Verdict) {
        trial_with(|r, _| times(r), |t| t)
    }

    #[test]
    fn clearly_faster_routes_are_kept_after_two_tries_each() {
        let clear = 1.1 * ROUTE_TRIAL_CLEAR;
        let (ran, verdict) = run(|r| if r == 2 { 1.0 } else { clear });
        assert_eq!(ran, [1, 2, 2, 1, 2]);
        assert_eq!(verdict, Verdict::Kept { other: true });
        let (ran, verdict) = run(|r| if r == 2 { clear } else { 1.0 });
        assert_eq!(ran, [1, 2, 2, 1, 1]);
        assert_eq!(verdict, Verdict::Kept { other: false });
    }

    #[test]
    fn close_routes_are_tried_four_times_each() {
        let close = 0.9 * ROUTE_TRIAL_CLEAR;
        let (ran, verdict) = run(|r| if r == 2 { 1.0 } else { close });
        assert_eq!(ran, [1, 2, 2, 1, 1, 2, 2, 1, 2]);
        assert_eq!(verdict, Verdict::Kept { other: true });
        let (ran, verdict) = run(|r| if r == 2 { close } else { 1.0 });
        assert_eq!(ran, [1, 2, 2, 1, 1, 2, 2, 1, 1]);
        assert_eq!(verdict, Verdict::Kept { other: false });
        // A tie keeps the probe's routes.
        let (_, verdict) = run(|_| 1.0);
        assert_eq!(verdict, Verdict::Kept { other: false });
    }

    #[test]
    fn one_slowed_try_does_not_decide() {
        // The probe's routes are faster, but both their first tries were
        // slowed (by 1.5×): their later tries win.
        let times = |r, n| match (r, n) {
            (1, 0 | 1) => 1.5,
            (1, _) => 1.0,
            _ => 1.2,
        };
        let (ran, verdict) = trial_with(times, |t| t);
        assert_eq!(ran, [1, 2, 2, 1, 1, 2, 2, 1, 1]);
        assert_eq!(verdict, Verdict::Kept { other: false });
    }

    #[test]
    fn each_ways_best_time_counts() {
        // Each way is slow on its first try only (fresh buffers), the
        // probe's the slowest then: they still win on their second try.
        let times = |r, n| match (r, n) {
            (1, 0) => 3.0,
            (1, _) => 0.4,
            (_, 0) => 1.0,
            _ => 0.6,
        };
        let (ran, verdict) = trial_with(times, |t| t);
        assert_eq!(ran, [1, 2, 2, 1, 1]);
        assert_eq!(verdict, Verdict::Kept { other: false });
    }

    #[test]
    fn the_slowest_rank_decides() {
        // This rank finds the other routes faster, but another rank finds
        // them slower.
        let times = |r, _| if r == 2 { 0.5 } else { 1.0 };
        let (ran, verdict) = trial_with(times, |[p, o]| [p, o.max(1.1 * p)]);
        assert_eq!(ran.last(), Some(&1));
        assert_eq!(verdict, Verdict::Kept { other: false });
    }
}
