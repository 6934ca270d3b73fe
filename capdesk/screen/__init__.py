"""What is on the screen: the object with the keyboard focus, the active window, a region, the whole screen.

Owns asking the accessibility bus (AT-SPI) where the focused object is (``atspi``), reading those pixels
from the X11 display into memory (``capture``) and handing a description to speech-dispatcher, the
speech service the screen reader uses (``speechd``).

May import: describe/, model/ and the shared vocabulary. Never session/, cli/, gui/.
"""
