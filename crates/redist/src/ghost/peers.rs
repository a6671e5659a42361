//! Mappings of the owners' storage a reader reads ghosts from, kept per
//! receive for the few arrays a solver alternates between (the storage id
//! tells them apart; ids are never reused), so a loop maps nothing after
//! its first steps.

use dist_array::{ReadMapping, SharedStorage};

/// Arrays remembered per owner: a solver's current and next array, and
/// room for one more.
const KEPT: usize = 3;

/// Per receive, the mappings made of its owner's storage.
#[derive(Default)]
pub(super) struct PeerMaps {
    maps: Vec<Vec<(u32, u64, ReadMapping)>>,
    /// Mappings made so far (a figure for tests and tools).
    pub made: usize,
}

impl PeerMaps {
    /// Room for `recvs` owners.
    pub fn new(recvs: usize) -> PeerMaps {
        PeerMaps {
            maps: (0..recvs).map(|_| Vec::new()).collect(),
            made: 0,
        }
    }

    /// The mapping of receive `k`'s owner's `storage`, made if new; `bytes`
    /// is what the plan says that storage holds (a note saying otherwise
    /// is not trusted).
    pub fn get(
        &mut self,
        k: usize,
        storage: &SharedStorage,
        bytes: usize,
    ) -> std::io::Result<&ReadMapping> {
        if storage.bytes != bytes {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "a storage of {} bytes where {bytes} were planned",
                    storage.bytes
                ),
            ));
        }
        let kept = &mut self.maps[k];
        let found = kept
            .iter()
            .position(|(pid, id, _)| *pid == storage.pid && *id == storage.id);
        let i = match found {
            Some(i) => i,
            None => {
                let map = storage.map_read_only()?;
                self.made += 1;
                if kept.len() == KEPT {
                    kept.remove(0);
                }
                kept.push((storage.pid, storage.id, map));
                kept.len() - 1
            }
        };
        Ok(&kept[i].2)
    }
}
