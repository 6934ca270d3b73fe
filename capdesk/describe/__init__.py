"""Describing one picture: from the model's caption to what is said about it.

Owns the ``Describer`` (the one path from a file to a ``Described``), the alt-text rule that
decides what is said as fact, as "Probably" or not at all (``alttext``), the ImageNet tags
(``tags``), text read from the picture (``ocr``), plain facts from the pixels (``pixelfacts``),
the extended description (``extdescr``), and the objects a COCO detector finds, with scores
calibrated on captioned photos (``detector``, ``calibration``); the detector runs beside the caption
model, on threads of their own (``beside``).

May import: model/ and the shared vocabulary. Never sidecars/, folders/ or anything above.
"""
