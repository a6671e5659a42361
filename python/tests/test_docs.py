"""The docstrings' examples run, and help() shows them."""

import doctest
import os
import pathlib
import pydoc
import re

import numpy as np

import ndcyclic
import ndcyclic._ndcyclic


def run_examples(obj, name):
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(obj, name, globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    return result.attempted


def test_module_and_class_examples_run():
    attempted = run_examples(ndcyclic, "ndcyclic")
    for cls in (ndcyclic.Layout, ndcyclic.DistArray, ndcyclic.Redistribution):
        attempted += run_examples(cls, cls.__name__)
    attempted += run_examples(ndcyclic.from_function, "from_function")
    for f in (ndcyclic.build_info, ndcyclic.check_mpi, ndcyclic.mpi_check.compare):
        n = run_examples(f, f.__name__)
        assert n > 0, f.__name__
        attempted += n
    assert attempted >= 18


def test_help_shows_an_example():
    text = pydoc.render_doc(ndcyclic.Redistribution, renderer=pydoc.plaintext)
    assert ">>> r = ndcyclic.Redistribution(comm, rows, blocks)" in text
    assert "execute" in text


def test_every_public_name_is_documented():
    for name in ndcyclic.__all__:
        obj = getattr(ndcyclic, name)
        assert obj.__doc__ and len(obj.__doc__) > 40, name


def python_blocks(page):
    """The ```python blocks of a page of docs/, in order."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_guide_s_first_program_and_file_snippet_run(tmp_path_factory):
    """docs/python.md's first program as it is, then its files snippet on
    the first program's array (where the build has HDF5), in a folder
    every rank shares."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    blocks = python_blocks("python.md")
    first = blocks[0]
    files = next(b for b in blocks if "run.h5" in b)
    folder = comm.bcast(str(tmp_path_factory.mktemp("guide")) if comm.rank == 0 else None)
    here = os.getcwd()
    os.chdir(folder)
    try:
        names = {}
        exec(compile(first, "docs/python.md (first program)", "exec"), names)
        if comm.rank == 0:
            assert (names["whole"] == 2 * np.fromfunction(lambda i, j: 10.0 * i + j, (8, 6))).all()
        if ndcyclic.build_info()["hdf5"]:
            exec(compile(files, "docs/python.md (files)", "exec"), names)
            g = names["u"].gather()
            if comm.rank == 0:
                assert (g == np.fromfunction(lambda i, j: 10.0 * i + j, (8, 6))).all()
            assert names["w"].shape == (8, 3)
    finally:
        comm.Barrier()
        os.chdir(here)
