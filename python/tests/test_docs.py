"""The docstrings' examples run, and help() shows them."""

import doctest
import pydoc

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
