"""Keep the dependencies' own chatter out of notebook cells, so that a reader sees the kit's progress
bars and results, not red stderr bands.

What is silenced, and why each is nothing a reader can act on:
- transformers' internal progress bars ("Writing model shards" once per `save_pretrained`, the
  weight-loading bars) and datasets' map/filter bars: they finish in milliseconds on the kit's
  small models. The Trainer's own training bar is not one of them and stays, and so do
  huggingface_hub's download bars: a hub model is a download of minutes (gigabytes), which a
  reader wants to watch (``HF_HUB_DISABLE_PROGRESS_BARS=1`` hides them).
- bitsandbytes' "Failed to load CPU gemm_4bit_forward from kernels-community" on CPUs with
  AVX512-BF16: the kit runs NF4 on a CPU only to exercise the QLoRA code path (never for
  figures), and the fix it suggests (`pip install kernels`, a download at run time) is one the
  kit does not want. Only that message is dropped; every other bitsandbytes warning stays.
- transformers' "mtime may not be reliable on this filesystem": the Trainer says it whenever two
  checkpoints were saved within a second (a smoke run), then orders them by step number, which is
  what the kit wants anyway.
"""
from __future__ import annotations

import logging

DROPPED_MESSAGES = {
    "bitsandbytes.backends.cpu.ops": "Failed to load CPU gemm_4bit_forward",
    "transformers.trainer_utils": "mtime may not be reliable",
}
"""Logger name -> the start of the one message dropped from it."""


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str):
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


def drop_dependency_messages() -> None:
    """The log messages of `DROPPED_MESSAGES`. Cheap (no import); bitsandbytes logs its message
    while it is imported, so this must run before that."""
    for name, prefix in DROPPED_MESSAGES.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropMessage) and f.prefix == prefix for f in logger.filters):
            logger.addFilter(_DropMessage(prefix))


def quiet_dependencies() -> None:
    """Silence everything the module docstring lists. Idempotent."""
    drop_dependency_messages()
    # Here, not at the top: wmkit/__init__.py imports this module (--help too); these take seconds.
    import datasets
    import huggingface_hub.utils
    import transformers

    transformers.utils.logging.disable_progress_bar()  # this switches huggingface_hub's bars off too:
    huggingface_hub.utils.enable_progress_bars()  # downloads keep theirs (unless the environment says no)
    datasets.disable_progress_bars()


TRANSIENT_DELAY_SECONDS = 2.0
"""A transient bar appears only once its loop has run this long: the kit's inner loops (a batch of
generation, a short SFT) often finish at smoke size before a bar would say anything."""


def transient_bar(iterable=None, **kwargs):
    """A tqdm.auto bar that leaves nothing behind: shown only after `TRANSIENT_DELAY_SECONDS`, and
    on close removed (tqdm's `leave=False` only hides a notebook widget, leaving an empty band
    where it was, and a text bar leaves a blank line)."""
    from tqdm.auto import tqdm

    bar = tqdm(iterable, leave=False, delay=TRANSIENT_DELAY_SECONDS, **kwargs)
    container = getattr(bar, "container", None)  # the notebook widget (tqdm.notebook), else None
    if container is not None:
        close = bar.close

        def close_and_remove():
            close()
            container.layout.display = "none"  # takes no room, unlike tqdm's visibility = 'hidden'

        bar.close = close_and_remove
    return bar
