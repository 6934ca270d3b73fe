"""What is on the screen: the object with the keyboard focus, the active window, a region, the whole screen.

Owns asking the accessibility bus (AT-SPI) where the focused object is (``atspi``), reading those pixels
into memory from the X11 display or the Wayland desktop portal's screenshot (``capture``, ``portal``),
how a window or the whole screen is said, as a screenshot of its program with its pictures described
one by one and every word read in it (``shown``, ``screenshot``, ``wholetext``), the key that runs it in
GNOME (``shortcut``), and handing a description to speech-dispatcher, the
speech service the screen reader uses (``speechd``); and ``capdesk service``, which keeps all of it
loaded so that a key press is answered at once, over a socket only the user can reach (``service``,
``client``) or through a key it grabs itself on X11 (``keygrab``).

May import: describe/, model/ and the shared vocabulary. Never session/, cli/, gui/.
"""
