"""wmkit.quiet drops exactly the dependency messages it names, and the transient bars leave nothing."""
import io
import logging


def test_only_the_named_messages_are_dropped():
    from wmkit.quiet import DROPPED_MESSAGES, drop_dependency_messages

    drop_dependency_messages()
    drop_dependency_messages()  # idempotent: one filter per logger
    for name, prefix in DROPPED_MESSAGES.items():
        logger = logging.getLogger(name)
        assert len(logger.filters) == 1
        seen = io.StringIO()
        handler = logging.StreamHandler(seen)
        logger.addHandler(handler)
        try:
            logger.warning(prefix + " (and the rest of the message)")
            logger.warning("any other warning")
        finally:
            logger.removeHandler(handler)
        assert seen.getvalue() == "any other warning\n", name


def test_a_short_transient_bar_never_shows():
    from wmkit.quiet import transient_bar

    out = io.StringIO()
    assert sum(transient_bar(range(100), file=out)) == 4950
    assert out.getvalue() == ""
