//! What the launcher says of this node: how many of the job's ranks it
//! started here ([`ranks_on_node`]), and whether they outnumber the cores
//! ([`oversubscribed`]), which decides whether waits spin inside MPI or
//! test and yield the core.

use std::sync::OnceLock;

/// How many processes of the job the launcher started on this node, from
/// its environment (`MPI_LOCALNRANKS` of MPICH's Hydra,
/// `OMPI_COMM_WORLD_LOCAL_SIZE` of Open MPI, `PMI_LOCAL_SIZE`); 1 when it
/// does not say. Not collective. Whether ranks have cores to themselves
/// (see [`std::thread::available_parallelism`]) decides whether they should
/// spread work over threads or leave the cores to their neighbours.
///
/// ```
/// assert!(mpi_extras::launcher::ranks_on_node() >= 1);
/// ```
pub fn ranks_on_node() -> usize {
    local_ranks(|k| std::env::var(k).ok())
}

fn local_ranks(var: impl Fn(&str) -> Option<String>) -> usize {
    [
        "MPI_LOCALNRANKS",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "PMI_LOCAL_SIZE",
    ]
    .iter()
    .find_map(|k| var(k).and_then(|v| v.trim().parse::<usize>().ok()))
    .filter(|&n| n > 0)
    .unwrap_or(1)
}

/// Whether this node runs more of the job's ranks than it has cores (from
/// the launcher's environment, [`ranks_on_node`], decided once): then
/// waits test and yield instead of spinning inside MPI.
///
/// `NDCYCLIC_OVERSUBSCRIBED=1` (or `0`) says so where the launcher cannot
/// know: nodes emulated on one machine (`scripts/cluster.sh` sets it when
/// its ranks outnumber the machine's cores) share cores the launcher counts
/// once per node.
///
/// ```
/// let _ = mpi_extras::launcher::oversubscribed();
/// ```
pub fn oversubscribed() -> bool {
    static OVERSUBSCRIBED: OnceLock<bool> = OnceLock::new();
    *OVERSUBSCRIBED.get_or_init(|| {
        let told = std::env::var("NDCYCLIC_OVERSUBSCRIBED").ok();
        told.as_deref().map(str::trim).map_or_else(
            || {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                ranks_on_node() > cores
            },
            |v| v == "1",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_ranks_come_from_either_launcher() {
        let mpich = |k: &str| (k == "MPI_LOCALNRANKS").then(|| "24".to_string());
        let ompi = |k: &str| (k == "OMPI_COMM_WORLD_LOCAL_SIZE").then(|| "3".to_string());
        assert_eq!(local_ranks(mpich), 24);
        assert_eq!(local_ranks(ompi), 3);
        assert_eq!(local_ranks(|_| None), 1);
        assert_eq!(local_ranks(|_| Some("zero".to_string())), 1);
        assert_eq!(local_ranks(|_| Some("0".to_string())), 1);
    }
}
