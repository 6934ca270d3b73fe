"""The documented ranges of what a user (or a file) may ask for, in one place.

The CLI, the settings file and the dialogs check against the same numbers, so a value the
command line refuses can never slip in through ``settings.json``. A beam of 5,000 would make
the decoder hold 5,000 hypotheses per image (gigabytes of memory); 20 is far past the point
where wider beams stop helping.
"""

from __future__ import annotations

BEAM_MIN, BEAM_MAX = 1, 20
# The beam a model's manifest asks for (decoding.beam) is used unless the user chose one (--beam,
# or a beam in Settings); this is the width for a model whose manifest names none.
DEFAULT_BEAM = 3
# Under it, a caption of a model without a trust score is said as "Probably ..." and flagged for review;
# with a trust score, a threshold set other than this can only take facts away. What may be said and how
# surely is decided in capdesk.describe.policy, which holds every other threshold of the alt text.
DEFAULT_CONFIDENCE_THRESHOLD = 0.35
CONFIDENCE_MIN, CONFIDENCE_MAX = 0.0, 1.0
# The trust score's two thresholds are the policy's (capdesk.describe.policy, with the measurement that
# set them); they are kept here, the bottom layer, because the window's help quotes them and the window
# may not import the describing layer.
TRUST_FACT_THRESHOLD = 0.8
TRUST_PROBABLY_THRESHOLD = 0.1
# A picture just outside a model's domain gate (distance ratio 1 to this) is marked near by the route
# (capdesk.model.domain); the policy says its caption as "Probably" at most when the model has a trust
# score. On the everyday val split the gate alone withheld 7.1% of the COCO photos, whose captions named
# an absent object no more often than the "Probably" ones (4 of 17; Flickr8k 0 of 8); under 1.15 it
# withholds 0.8%. Studio close-ups lie beyond 1.2.
NEAR_DOMAIN_RATIO = 1.15
DEFAULT_TAG_THRESHOLD = 0.35  # an object tag's probability from which it is said (when the manifest names none)
MAX_TAGS = 3

SIDECAR_FORMATS = ("txt", "xmp")
SIDECAR_NAMINGS = ("ext", "stem")
PROVIDER_CHOICES = ("auto", "cpu", "cuda", "gpu", "directml", "dml", "coreml", "tensorrt", "openvino")
SPEECH_MODES = ("auto", "speak", "announce", "off")
TAGS_MODES = ("auto", "always", "never")
OCR_MODES = ("auto", "always", "never")

SPEECH_RATE_MIN, SPEECH_RATE_MAX = 80, 450  # words per minute
VOLUME_MIN, VOLUME_MAX = 0.0, 1.0

# A model name becomes a folder name in the user's model folder: a plain identifier only.
MODEL_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# BCP 47-ish language tag for XMP xml:lang ("en", "pt-BR", "x-default").
LANG_PATTERN = r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$"

# A model's declared input square and attention grid (manifest ``encoder.input_size``, ``encoder.grid``).
# Every picture is scaled to the input square before the encoder runs, so its side sets the memory a
# batch needs: 224 (the shipped models) takes megabytes, 4096 took 3.4 GB for 8 pictures. 1024 is past
# any captioning encoder's input (the largest common ones take 600); the grid of cells the decoder
# attends to is at most that square at the usual stride of 16 (64 x 64).
MODEL_INPUT_SIZE_MIN, MODEL_INPUT_SIZE_MAX = 16, 1024
MODEL_GRID_MAX = 4096

SETTINGS_MAX_BYTES = 1 << 20  # a settings file is a few hundred bytes; a megabyte is already absurd
WINDOW_SIDE_MIN, WINDOW_SIDE_MAX = 200, 20000  # a remembered window side, in logical pixels
WATCH_FOLDERS_MAX = 256
