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


def test_importing_the_kit_silences_bitsandbytes_before_anything_imports_it():
    # transformers can import bitsandbytes at import time (wmkit.notebook imports transformers), and
    # bitsandbytes logs its kernel message while it is imported: the filter must already be there.
    import subprocess
    import sys

    code = ("import logging, sys; import wmkit.notebook; "
            "print('bitsandbytes' in sys.modules, bool(logging.getLogger('bitsandbytes.backends.cpu.ops').filters))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "gemm_4bit_forward" not in done.stderr
    assert done.stdout.split()[-1] == "True"


def test_the_kits_chatter_is_off_but_hub_downloads_keep_their_bars(monkeypatch):
    """transformers' and datasets' internal bars are off; huggingface_hub's download bars (a multi-GB
    model) stay on, unless HF_HUB_DISABLE_PROGRESS_BARS says otherwise."""
    import datasets
    import huggingface_hub.utils
    import transformers

    from wmkit.quiet import quiet_dependencies

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    quiet_dependencies()
    assert not transformers.utils.logging.is_progress_bar_enabled()
    assert not datasets.is_progress_bar_enabled()
    assert not huggingface_hub.utils.are_progress_bars_disabled()
    assert not huggingface_hub.utils.are_progress_bars_disabled("huggingface_hub.file_download")
