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
DEFAULT_CONFIDENCE_THRESHOLD = 0.35  # under it, a caption is said as "Probably ..." and flagged for review
CONFIDENCE_MIN, CONFIDENCE_MAX = 0.0, 1.0
# The trust score (capdesk.describe.trust) reads as the probability that a caption names no object that
# is not in the picture. From TRUST_FACT_THRESHOLD up a caption is said as fact, from
# TRUST_PROBABLY_THRESHOLD up as "Probably ...", under it the scene caption is withheld and what the
# concepts and tags are sure of is said instead. The fact threshold is the lowest at which, on the
# everyday val split, the facts of each collection name an absent object at most 5% of the time
# (`capdesk train ground` reports it); a caption is withheld only when it is at least four times as
# likely to name something absent as not (docs/training.md, "Saying only what is true").
TRUST_FACT_THRESHOLD = 0.8
TRUST_PROBABLY_THRESHOLD = 0.1
# A caption is said as fact only for a picture at least as typical of the model's pictures as this share
# of its own val photos (the manifest's trust.fact_domain_ratio is that quantile of their domain ratios):
# photos unlike the training photos fool the concepts as much as the captioner (an astronaut in a suit,
# a horse's silhouette, a motorbike parked indoors), so there the caption is "Probably" at most.
FACT_ZONE_QUANTILE = 0.875
# A picture just outside a model's domain gate (distance ratio 1 to this) is not withheld when the model
# has a trust score: its caption is "Probably" at most. On the everyday val split the gate alone withheld
# 7.1% of the COCO photos, whose captions named an absent object no more often than the "Probably"
# ones (4 of 17; Flickr8k 0 of 8); under 1.15 it withholds 0.8%. Studio close-ups lie beyond 1.2.
NEAR_DOMAIN_RATIO = 1.15
CONCEPT_SAY_THRESHOLD = 0.6  # a concept said without a scene caption ("Probably a cat.") from this probability
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
WATCH_FOLDERS_MAX = 256
