"""Layout: spec strings, index maps against a naive oracle. Local, no MPI."""

import itertools

import numpy as np
import pytest

import ndcyclic


def owner_oracle(n, p, b, i):
    """Grid coordinate and local index of global index i, block size b over p."""
    return (i // b) % p, (i // (b * p)) * b + i % b


@pytest.mark.parametrize(
    "shape,spec",
    [
        ((10, 7), "cyclic(3),block+1@2x2"),
        ((9, 5), "cyclic,*@3x1"),
        ((5, 6, 7), "cyclic(2),block,*@2x2x1"),
        ((13,), "cyclic(4)@3"),
        ((4, 3), "*,*@1x1"),
    ],
)
def test_spec_round_trips_and_maps_agree(shape, spec):
    l = ndcyclic.Layout(shape, spec)
    assert str(l) == spec
    assert ndcyclic.Layout(l.shape, str(l)) == l
    assert l.shape == shape and l.ndim == len(shape) and l.size == int(np.prod(shape))
    assert eval(repr(l), {"Layout": ndcyclic.Layout}) == l
    counts = np.zeros(l.ranks, dtype=int)
    for g in itertools.product(*(range(n) for n in shape)):
        rank, local = l.global_to_local(g)
        assert l.owner(g) == rank
        assert l.local_to_global(rank, local) == g
        counts[rank] += 1
    for r in range(l.ranks):
        assert counts[r] == int(np.prod(l.local_shape(r)))
        assert list(l.local_shape(r)) == l.local_shapes()[r]
        index = l.local_indices(r)
        assert tuple(len(ix) for ix in index) == l.local_shape(r)
        for local in itertools.product(*(range(len(ix)) for ix in index)):
            g = tuple(int(index[d][k]) for d, k in enumerate(local))
            assert l.global_to_local(g) == (r, local)


def test_cyclic_block_maps_match_the_formula():
    l = ndcyclic.Layout((23,), "cyclic(3)@4")
    for i in range(23):
        p, loc = owner_oracle(23, 4, 3, i)
        assert l.global_to_local((i,)) == (p, (loc,))


def test_order_and_rank_map():
    l = ndcyclic.Layout((4, 6), "block,block@2x2", order="F", rank_map=[3, 2, 1, 0])
    assert l.order == "F"
    assert l.rank_map == [3, 2, 1, 0]
    assert l.owner((0, 0)) == 3
    assert "rank_map=[3, 2, 1, 0]" in repr(l)
    assert eval(repr(l), {"Layout": ndcyclic.Layout}) == l
    assert l.with_order("C").order == "C"


@pytest.mark.parametrize(
    "args,error",
    [
        (((4, 4), "blok,*@2x1"), ValueError),
        (((4, 4), "block@2"), ValueError),
        (((4, 4), "block,*@2x1", "Z"), ValueError),
        (((4, 4), "cyclic(0),*@2x1"), ValueError),
    ],
)
def test_bad_layouts_are_value_errors(args, error):
    with pytest.raises(error):
        ndcyclic.Layout(*args)


def test_bad_indices_are_value_errors():
    l = ndcyclic.Layout((4, 4), "block,*@2x1")
    with pytest.raises(ValueError):
        l.owner((4, 0))
    with pytest.raises(ValueError):
        l.local_shape(2)
    with pytest.raises(ValueError):
        l.global_to_local((0,))


def test_coords_and_pickling():
    import pickle

    l = ndcyclic.Layout((10, 7), "cyclic(3),block@2x3", order="F", rank_map=[5, 4, 3, 2, 1, 0])
    assert l.coords(5) == (0, 0) and l.coords(0) == (1, 2)
    for r in range(6):
        rank, _ = l.global_to_local(tuple(int(ix[0]) for ix in l.local_indices(r)))
        assert rank == r
    assert pickle.loads(pickle.dumps(l)) == l
