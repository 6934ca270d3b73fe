"""Describing one picture: from the model's caption to what is said about it.

Owns the ``Describer`` (the one path from a file to a ``Described``), the alt-text rule that
decides what is said as fact, as "Probably" or not at all (``alttext``), the ImageNet tags
(``tags``), text read from the picture (``ocr``), plain facts from the pixels (``pixelfacts``),
the extended description (``extdescr``), and the objects a COCO detector finds, with scores
calibrated on captioned photos (``detector``, ``calibration``); the detector runs beside the caption
model, on threads of their own (``beside``). What may be said is decided by ``policy`` from one evidence
record, through what is seen (``seeing``), how surely it is said (``saying``) and how the caption is mended
(``mending``, with the word operations of ``captionfix`` on a caption read once by ``sentence``), by each
model's frozen ``settings``; ``composer`` writes the words.

May import: model/ and the shared vocabulary. Never sidecars/, folders/ or anything above.
"""
