//! The arrays of one execution ([`Arrays`]): K sources and their
//! targets, as every exchange is handed them (one array is a batch of
//! one).

use dist_array::DistArray;

/// The arrays of one execution: K sources and the targets they are
/// redistributed into (the `j`-th source into the `j`-th target), checked
/// against the redistribution's layouts.
pub(crate) struct Arrays<'a, 'd, T> {
    /// The sources.
    pub sources: &'a [&'a DistArray<T>],
    /// The targets, as many as sources.
    pub targets: &'a mut [&'d mut DistArray<T>],
}

impl<'a, 'd, T> Arrays<'a, 'd, T> {
    /// Each source with its target, in order.
    pub fn pairs<'s>(
        &'s mut self,
    ) -> impl Iterator<Item = (&'s DistArray<T>, &'s mut DistArray<T>)> + use<'s, 'a, 'd, T> {
        let targets = self.targets.iter_mut().map(|d| &mut **d);
        self.sources.iter().copied().zip(targets)
    }

    /// The number of pairs, K.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Consecutive groups of `size` pairs (the last one may be shorter).
    pub fn groups<'s>(
        &'s mut self,
        size: usize,
    ) -> impl Iterator<Item = Arrays<'s, 'd, T>> + use<'s, 'a, 'd, T> {
        let size = size.max(1);
        let sources = self.sources.chunks(size);
        let targets = self.targets.chunks_mut(size);
        sources
            .zip(targets)
            .map(|(sources, targets)| Arrays { sources, targets })
    }
}
