//! The process grid: a Cartesian arrangement of (some of) a communicator's ranks.

use crate::coords::{check_extents, coords_to_rank, rank_to_coords, shifted, Order};
use crate::dims::balanced_extents;
use crate::error::GridError;
use crate::node::Node;
use mpi::topology::{CartesianCommunicator, Communicator, SimpleCommunicator};
use mpi::Count;
use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// The two neighbours of a rank along one grid dimension, as `MPI_Cart_shift`
/// reports them: the rank a message would come from and the rank it would go
/// to. `None` where a non-periodic dimension ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shift {
    /// The rank at coordinate `c - disp`: where data shifted by `disp` comes from.
    pub source: Option<usize>,
    /// The rank at coordinate `c + disp`: where data shifted by `disp` goes to.
    pub dest: Option<usize>,
}

/// A process grid over a communicator.
///
/// The grid arranges ranks `0..size()` of its communicator in a Cartesian grid
/// of the given extents. Grid rank `r` is rank `r` of the communicator, and
/// coordinates map to ranks in row-major order (the last coordinate varies
/// fastest) or, when selected, column-major order. When the extents use fewer
/// ranks than the communicator has, the remaining ranks are not members: they
/// get a grid value that says so ([`is_member`](Self::is_member) is false,
/// [`coords`](Self::coords) is `None`) and can still take part in operations
/// over the whole communicator, such as redistributing onto a larger grid.
///
/// The grid owns a duplicate of the communicator it was built from, so
/// messages it (and everything built on it) sends never meet the user's own
/// traffic. Grids built with [`GridBuilder::build_sharing`] share one
/// duplicate and so can exchange data with each other.
///
/// Cloning a grid is cheap: clones share the same communicators.
///
/// Drop grids before the MPI universe: dropping the last clone of a grid frees
/// its communicators.
///
/// ```
/// use procgrid::ProcGrid;
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let grid = ProcGrid::balanced(&world, 2).unwrap();
/// assert_eq!(grid.size(), world.size() as usize);
/// let me = grid.coords().unwrap();
/// assert_eq!(grid.rank_of(me).unwrap(), world.rank() as usize);
/// ```
#[derive(Clone)]
pub struct ProcGrid {
    parent: Arc<SimpleCommunicator>,
    /// What the grids sharing `parent` find once: the calling rank's node,
    /// and the values of [`memo`](ProcGrid::memo).
    shared: Arc<Shared>,
    cart: Option<Arc<CartesianCommunicator>>,
    extents: Vec<usize>,
    periodic: Vec<bool>,
    order: Order,
    coords: Option<Vec<usize>>,
}

/// What the grids over one communicator find once and share.
#[derive(Default)]
struct Shared {
    /// The node of the calling rank, found on first use.
    node: OnceLock<Node>,
    /// Values of [`ProcGrid::memo`], one per type.
    memos: Mutex<Vec<Box<dyn Any + Send + Sync>>>,
}

/// Options for building a [`ProcGrid`]: periodicity, rank order, and whether the
/// grid may use only part of the communicator.
///
/// ```
/// use procgrid::{Order, ProcGrid};
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let n = world.size() as usize;
/// let grid = ProcGrid::builder(&[1, n])
///     .periodic(&[false, true])
///     .order(Order::ColumnMajor)
///     .build(&world)
///     .unwrap();
/// assert_eq!(grid.periodic(), &[false, true]);
/// assert_eq!(grid.order(), Order::ColumnMajor);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridBuilder {
    extents: Vec<usize>,
    periodic: Option<Vec<bool>>,
    order: Order,
    subset: bool,
}

impl GridBuilder {
    /// Starts a grid of the given extents: non-periodic, row-major, using every rank.
    pub fn new(extents: &[usize]) -> Self {
        GridBuilder {
            extents: extents.to_vec(),
            periodic: None,
            order: Order::RowMajor,
            subset: false,
        }
    }

    /// Marks dimensions periodic (one flag per dimension; `true` wraps shifts around).
    pub fn periodic(mut self, periodic: &[bool]) -> Self {
        self.periodic = Some(periodic.to_vec());
        self
    }

    /// Chooses how coordinates are linearised into ranks.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Allows the grid to use fewer ranks than the communicator has: ranks
    /// `0..product(extents)` become members, the others are told they are not.
    /// Without it, the product of the extents must equal the communicator's size.
    pub fn subset(mut self, allow: bool) -> Self {
        self.subset = allow;
        self
    }

    /// Builds the grid over `comm`, duplicating it. Collective over `comm`.
    ///
    /// Every rank must pass the same builder.
    ///
    /// # Errors
    ///
    /// - [`GridError::NoDimensions`], [`GridError::ZeroExtent`] or
    ///   [`GridError::ExtentOverflow`] when the extents are not a grid
    ///   ([`check_extents`]);
    /// - [`GridError::DimensionCount`] when periodic flags were given, not one per extent;
    /// - [`GridError::SizeMismatch`] when the product of the extents is not the size of
    ///   `comm` (without [`subset`](Self::subset));
    /// - [`GridError::TooFewRanks`] when it exceeds the size of `comm` (with
    ///   [`subset`](Self::subset)).
    ///
    /// The arguments are checked before any collective call and without
    /// communication: an error is local to the rank, the same on every rank
    /// when all pass the same builder.
    pub fn build<C: Communicator>(self, comm: &C) -> Result<ProcGrid, GridError> {
        self.validate(comm.size() as usize)?;
        let parent = Arc::new(library_duplicate(comm));
        self.create(parent, Arc::default())
    }

    /// Builds the grid over the communicator that `other` was built over,
    /// sharing its duplicate, so data can move between the two grids.
    /// Collective over that communicator (members of `other` or not).
    ///
    /// ```
    /// use procgrid::ProcGrid;
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let rows = ProcGrid::new(&world, &[n, 1]).unwrap();
    /// let cols = ProcGrid::builder(&[1, n]).build_sharing(&rows).unwrap();
    /// assert!(rows.shares_communicator(&cols));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build), with the size of `other`'s communicator in
    /// place of `comm`'s; local to the rank in the same way.
    pub fn build_sharing(self, other: &ProcGrid) -> Result<ProcGrid, GridError> {
        self.validate(other.parent.size() as usize)?;
        self.create(Arc::clone(&other.parent), Arc::clone(&other.shared))
    }

    fn validate(&self, available: usize) -> Result<(), GridError> {
        let needed = check_extents(&self.extents)?;
        if let Some(p) = &self.periodic {
            if p.len() != self.extents.len() {
                return Err(GridError::DimensionCount {
                    what: "periodic flags",
                    expected: self.extents.len(),
                    got: p.len(),
                });
            }
        }
        if self.subset && needed > available {
            return Err(GridError::TooFewRanks {
                extents: self.extents.clone(),
                needed,
                available,
            });
        }
        if !self.subset && needed != available {
            return Err(GridError::SizeMismatch {
                extents: self.extents.clone(),
                needed,
                available,
            });
        }
        Ok(())
    }

    fn create(
        self,
        parent: Arc<SimpleCommunicator>,
        shared: Arc<Shared>,
    ) -> Result<ProcGrid, GridError> {
        let ndims = self.extents.len();
        let periodic = self.periodic.unwrap_or_else(|| vec![false; ndims]);
        // MPI lays its Cartesian ranks out row-major. For column-major order
        // the MPI grid gets the dimensions reversed, so that its ranks match
        // ours and MPI_Cart_sub keeps the same order in sub-grids.
        let (mut dims, mut periods): (Vec<Count>, Vec<bool>) = self
            .extents
            .iter()
            .map(|&e| Count::try_from(e).unwrap_or(Count::MAX))
            .zip(periodic.iter().copied())
            .unzip();
        if self.order == Order::ColumnMajor {
            dims.reverse();
            periods.reverse();
        }
        let cart = parent
            .create_cartesian_communicator(&dims, &periods, false)
            .map(Arc::new);
        let coords = match &cart {
            Some(c) => Some(rank_to_coords(
                c.rank() as usize,
                &self.extents,
                self.order,
            )?),
            None => None,
        };
        Ok(ProcGrid {
            parent,
            shared,
            cart,
            extents: self.extents,
            periodic,
            order: self.order,
            coords,
        })
    }
}

impl ProcGrid {
    /// A non-periodic, row-major grid of `extents` over all ranks of `comm`.
    /// The product of the extents must equal the size of `comm`.
    /// Collective over `comm`.
    ///
    /// ```
    /// use procgrid::{GridError, ProcGrid};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[n, 1]).unwrap();
    /// assert_eq!(grid.extents(), &[n, 1]);
    /// assert!(matches!(
    ///     ProcGrid::new(&world, &[n + 1, 1]),
    ///     Err(GridError::SizeMismatch { .. })
    /// ));
    /// ```
    ///
    /// # Errors
    ///
    /// - [`GridError::NoDimensions`], [`GridError::ZeroExtent`] or
    ///   [`GridError::ExtentOverflow`] when `extents` is not a grid
    ///   ([`check_extents`]);
    /// - [`GridError::SizeMismatch`] when the product of `extents` is not the size of `comm`.
    ///
    /// Checked before any collective call and without communication: an error
    /// is local to the rank, the same on every rank when all pass the same extents.
    pub fn new<C: Communicator>(comm: &C, extents: &[usize]) -> Result<ProcGrid, GridError> {
        GridBuilder::new(extents).build(comm)
    }

    /// A grid of `ndims` dimensions over all ranks of `comm`, with extents chosen
    /// by [`balanced_extents`]. Collective over `comm`.
    ///
    /// ```
    /// use procgrid::ProcGrid;
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::balanced(&world, 3).unwrap();
    /// assert_eq!(grid.ndims(), 3);
    /// assert_eq!(grid.size(), world.size() as usize);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`GridError::NoDimensions`] when `ndims` is 0 (any rank count splits over one
    ///   or more dimensions, so nothing else can fail).
    ///
    /// Checked before any collective call and without communication: local to
    /// the rank, the same on every rank when all pass the same `ndims`.
    pub fn balanced<C: Communicator>(comm: &C, ndims: usize) -> Result<ProcGrid, GridError> {
        let extents = balanced_extents(comm.size() as usize, &vec![0; ndims])?;
        GridBuilder::new(&extents).build(comm)
    }

    /// Starts a [`GridBuilder`] for a grid of `extents`.
    pub fn builder(extents: &[usize]) -> GridBuilder {
        GridBuilder::new(extents)
    }

    /// Number of grid dimensions.
    pub fn ndims(&self) -> usize {
        self.extents.len()
    }

    /// Extent of every grid dimension.
    pub fn extents(&self) -> &[usize] {
        &self.extents
    }

    /// Periodicity of every grid dimension.
    pub fn periodic(&self) -> &[bool] {
        &self.periodic
    }

    /// How coordinates are linearised into ranks.
    pub fn order(&self) -> Order {
        self.order
    }

    /// Number of ranks in the grid (the product of the extents).
    pub fn size(&self) -> usize {
        self.extents.iter().product()
    }

    /// Whether the calling rank belongs to the grid.
    pub fn is_member(&self) -> bool {
        self.cart.is_some()
    }

    /// The calling rank's grid rank, `None` when it is not a member.
    pub fn rank(&self) -> Option<usize> {
        self.cart.as_ref().map(|c| c.rank() as usize)
    }

    /// The calling rank's grid coordinates, `None` when it is not a member.
    pub fn coords(&self) -> Option<&[usize]> {
        self.coords.as_deref()
    }

    /// The grid rank at `coords`. It is also that process's rank in
    /// [`communicator`](Self::communicator) and in [`grid_communicator`](Self::grid_communicator).
    ///
    /// # Errors
    ///
    /// - [`GridError::DimensionCount`] when `coords` does not have one entry per dimension;
    /// - [`GridError::CoordinateOutOfRange`] when a coordinate is not below its extent.
    pub fn rank_of(&self, coords: &[usize]) -> Result<usize, GridError> {
        Ok(coords_to_rank(coords, &self.extents, self.order)?)
    }

    /// The grid coordinates of grid rank `rank`.
    ///
    /// # Errors
    ///
    /// - [`GridError::RankOutOfRange`] when `rank` is not below [`size`](Self::size).
    pub fn coords_of(&self, rank: usize) -> Result<Vec<usize>, GridError> {
        Ok(rank_to_coords(rank, &self.extents, self.order)?)
    }

    /// Neighbours of the process at `coords` along `dim` at distance `disp`
    /// (negative moves towards coordinate 0), with periodic dimensions wrapping.
    ///
    /// ```
    /// use procgrid::{ProcGrid, Shift};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let ring = ProcGrid::builder(&[n]).periodic(&[true]).build(&world).unwrap();
    /// let s = ring.shift_at(&[0], 0, 1).unwrap();
    /// assert_eq!(s, Shift { source: Some(n - 1), dest: Some(1 % n) });
    /// let line = ProcGrid::new(&world, &[n]).unwrap();
    /// assert_eq!(line.shift_at(&[0], 0, 1).unwrap().source, None);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`GridError::DimensionCount`] when `coords` does not have one entry per dimension;
    /// - [`GridError::CoordinateOutOfRange`] when a coordinate is not below its extent;
    /// - [`GridError::NoSuchDimension`] when `dim` is not below [`ndims`](Self::ndims).
    pub fn shift_at(&self, coords: &[usize], dim: usize, disp: i64) -> Result<Shift, GridError> {
        self.rank_of(coords)?;
        if dim >= self.ndims() {
            return Err(GridError::NoSuchDimension {
                dim,
                ndims: self.ndims(),
            });
        }
        let neighbour = |d: i64| -> Result<Option<usize>, GridError> {
            match shifted(coords[dim], d, self.extents[dim], self.periodic[dim]) {
                Some(c) => {
                    let mut at = coords.to_vec();
                    at[dim] = c;
                    self.rank_of(&at).map(Some)
                }
                None => Ok(None),
            }
        };
        Ok(Shift {
            source: neighbour(disp.saturating_neg())?,
            dest: neighbour(disp)?,
        })
    }

    /// Neighbours of the calling rank along `dim` at distance `disp`;
    /// `Ok(None)` on a rank that is not a member.
    ///
    /// # Errors
    ///
    /// - [`GridError::NoSuchDimension`] when `dim` is not below [`ndims`](Self::ndims),
    ///   on members and other ranks alike.
    pub fn shift(&self, dim: usize, disp: i64) -> Result<Option<Shift>, GridError> {
        if dim >= self.ndims() {
            return Err(GridError::NoSuchDimension {
                dim,
                ndims: self.ndims(),
            });
        }
        match self.coords() {
            Some(c) => self.shift_at(c, dim, disp).map(Some),
            None => Ok(None),
        }
    }

    /// The duplicate of the user's communicator the grid was built over: every
    /// rank of it, members or not.
    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.parent
    }

    /// The Cartesian communicator of the grid's members, `None` on other ranks.
    /// Its rank order is the grid's rank order.
    pub fn grid_communicator(&self) -> Option<&CartesianCommunicator> {
        self.cart.as_deref()
    }

    /// The ranks of the grid's communicator on the calling rank's node
    /// ([`Node`]).
    ///
    /// Found on the first call on any grid sharing this grid's communicator:
    /// that call is collective over the communicator (one all-gather of a
    /// key per rank), so every rank of it must make it at the same point;
    /// later calls cost nothing.
    pub fn node(&self) -> &Node {
        self.shared.node.get_or_init(|| Node::of(&self.parent))
    }

    /// A value found once per communicator: `compute` runs on the first
    /// call for type `T` on any grid sharing this grid's communicator
    /// ([`build_sharing`](GridBuilder::build_sharing)), later calls return
    /// a copy of its result. Layers above keep measurements of the
    /// communicator here (how fast it moves some kind of message).
    ///
    /// `compute` is given the grid's communicator and may be collective
    /// over it; then every rank must make the first call for `T` at the
    /// same point, as for [`node`](Self::node). It must not call `memo`
    /// itself.
    ///
    /// ```
    /// use procgrid::ProcGrid;
    ///
    /// #[derive(Clone, Copy, PartialEq, Debug)]
    /// struct Size(i32);
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::balanced(&world, 1).unwrap();
    /// let first = grid.memo(|comm| Size(mpi::topology::Communicator::size(comm)));
    /// let again = grid.memo(|_| Size(-1)); // not run: found already
    /// assert_eq!(first, again);
    /// ```
    pub fn memo<T: Clone + Send + Sync + 'static>(
        &self,
        compute: impl FnOnce(&SimpleCommunicator) -> T,
    ) -> T {
        let mut memos = self
            .shared
            .memos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(v) = memos.iter().find_map(|m| m.downcast_ref::<T>()) {
            return v.clone();
        }
        let v = compute(&self.parent);
        memos.push(Box::new(v.clone()));
        v
    }

    /// The value [`memo`](Self::memo) keeps for type `T` on this grid's
    /// communicator, if some call found it already; `None` otherwise.
    /// Local: nothing is computed.
    ///
    /// ```
    /// use procgrid::ProcGrid;
    ///
    /// #[derive(Clone, Copy, PartialEq, Debug)]
    /// struct Seen(bool);
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let grid = ProcGrid::balanced(&world, 1).unwrap();
    /// assert_eq!(grid.memoized::<Seen>(), None);
    /// grid.memo(|_| Seen(true));
    /// assert_eq!(grid.memoized::<Seen>(), Some(Seen(true)));
    /// ```
    pub fn memoized<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        let memos = self
            .shared
            .memos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        memos.iter().find_map(|m| m.downcast_ref::<T>()).cloned()
    }

    /// Whether `self` and `other` were built over the same duplicate
    /// communicator (see [`GridBuilder::build_sharing`]).
    pub fn shares_communicator(&self, other: &ProcGrid) -> bool {
        Arc::ptr_eq(&self.parent, &other.parent)
    }

    /// The grid of the processes that share the calling rank's coordinates in
    /// every dimension not kept: `keep[d]` retains dimension `d`
    /// (`MPI_Cart_sub`). The sub-grid keeps the order and the periodicity of
    /// the kept dimensions; its ranks are those of its own communicator.
    ///
    /// Collective over the grid's members; `Ok(None)` on other ranks.
    ///
    /// ```
    /// use procgrid::ProcGrid;
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[1, n]).unwrap();
    /// let line = grid.sub_grid(&[false, true]).unwrap().unwrap();
    /// assert_eq!(line.extents(), &[n]);
    /// assert_eq!(line.coords().unwrap()[0], grid.coords().unwrap()[1]);
    /// ```
    ///
    /// # Errors
    ///
    /// - [`GridError::DimensionCount`] when `keep` does not have one flag per dimension;
    /// - [`GridError::NoDimensions`] when `keep` keeps no dimension.
    ///
    /// Both are checked on every rank, members or not, before any collective
    /// call and without communication: local to the rank, the same on every
    /// rank when all pass the same `keep`.
    pub fn sub_grid(&self, keep: &[bool]) -> Result<Option<ProcGrid>, GridError> {
        if keep.len() != self.ndims() {
            return Err(GridError::DimensionCount {
                what: "kept-dimension flags",
                expected: self.ndims(),
                got: keep.len(),
            });
        }
        if !keep.iter().any(|&k| k) {
            return Err(GridError::NoDimensions);
        }
        let Some(cart) = self.cart.as_ref() else {
            return Ok(None);
        };
        let mut retain = keep.to_vec();
        if self.order == Order::ColumnMajor {
            retain.reverse();
        }
        let sub = cart.subgroup(&retain);
        let pick = |v: &[usize]| -> Vec<usize> {
            v.iter()
                .zip(keep)
                .filter(|(_, &k)| k)
                .map(|(&x, _)| x)
                .collect()
        };
        let extents = pick(&self.extents);
        let periodic: Vec<bool> = self
            .periodic
            .iter()
            .zip(keep)
            .filter(|(_, &k)| k)
            .map(|(&p, _)| p)
            .collect();
        let coords = rank_to_coords(sub.rank() as usize, &extents, self.order)?;
        let parent = Arc::new(library_duplicate(&sub));
        Ok(Some(ProcGrid {
            parent,
            shared: Arc::default(),
            cart: Some(Arc::new(sub)),
            extents,
            periodic,
            order: self.order,
            coords: Some(coords),
        }))
    }

    /// On a 2-D grid, the processes in the calling rank's grid row (same
    /// coordinate 0, all of dimension 1), as a 1-D grid: BLACS' row scope.
    /// Collective over the grid's members; `Ok(None)` on other ranks.
    ///
    /// # Errors
    ///
    /// - [`GridError::NotTwoDimensional`] when the grid does not have 2 dimensions.
    ///
    /// Checked before any collective call and without communication, from
    /// the grid alone: local to the rank, the same on every rank of the grid.
    pub fn row_grid(&self) -> Result<Option<ProcGrid>, GridError> {
        self.require_2d("row_grid")?;
        self.sub_grid(&[false, true])
    }

    /// On a 2-D grid, the processes in the calling rank's grid column (same
    /// coordinate 1, all of dimension 0), as a 1-D grid: BLACS' column scope.
    /// Collective over the grid's members; `Ok(None)` on other ranks.
    ///
    /// # Errors
    ///
    /// - [`GridError::NotTwoDimensional`] when the grid does not have 2 dimensions.
    ///
    /// Checked before any collective call and without communication, from
    /// the grid alone: local to the rank, the same on every rank of the grid.
    pub fn column_grid(&self) -> Result<Option<ProcGrid>, GridError> {
        self.require_2d("column_grid")?;
        self.sub_grid(&[true, false])
    }

    fn require_2d(&self, what: &'static str) -> Result<(), GridError> {
        if self.ndims() != 2 {
            return Err(GridError::NotTwoDimensional {
                what,
                ndims: self.ndims(),
            });
        }
        Ok(())
    }
}

impl fmt::Debug for ProcGrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcGrid")
            .field("extents", &self.extents)
            .field("periodic", &self.periodic)
            .field("order", &self.order)
            .field("coords", &self.coords)
            .finish()
    }
}

impl fmt::Display for ProcGrid {
    /// The extents joined by `x`, as in layout spec strings: `2x3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.extents.iter().map(|e| e.to_string()).collect();
        write!(f, "{}", parts.join("x"))
    }
}
/// A duplicate of `comm` for the library's own messages, whose MPI errors
/// abort the job with MPI's message: a duplicate inherits the user's error
/// handler, and with `MPI_ERRORS_RETURN` a failed call would otherwise pass
/// unnoticed on one rank while the others wait. Collective over `comm`.
fn library_duplicate<C: Communicator>(comm: &C) -> SimpleCommunicator {
    let dup = comm.duplicate();
    mpi_extras::communicator::set_errors_are_fatal(&dup);
    dup
}
