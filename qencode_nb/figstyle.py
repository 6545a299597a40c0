"""One style and one save for every figure of the toolkit (issue 25, item 5).

:data:`STYLE` holds the rcParams of every figure (fonts >= 8 pt, editable text in SVG
and PDF, 300 dpi, tight bounding box); :func:`styled` draws a figure function under it
(:func:`matplotlib.rc_context`); :func:`save_figure` writes a figure as PNG (300 dpi),
PDF and SVG with its caption beside it (``<stem>.caption.md``); :func:`show` puts the
PNG and its caption in a notebook.  A figure carries no title: what a title used to
say (counts, status) is its caption, shown under the figure.

matplotlib and IPython are imported inside the functions (docs/layout.md: importing a
room loads no numpy).
"""

from __future__ import annotations

import functools
from pathlib import Path

#: Every figure's files, in this order: PNG (raster, :data:`DPI`), PDF and SVG (vector).
FORMATS = ("png", "pdf", "svg")

#: The PNG's resolution (dots per inch, written in its pHYs chunk).
DPI = 300

#: The smallest font size on any figure (pt).
MIN_FONT_PT = 8

#: The rcParams of every figure.  Sizes in pt; ``svg.fonttype: none`` keeps text as
#: ``<text>`` (editable, searchable), ``pdf.fonttype: 42`` embeds TrueType fonts (not
#: Type 3); the layout is matplotlib's constrained layout and files are cut to their
#: tight bounding box.
STYLE = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
    "legend.frameon": True,
    "legend.framealpha": 0.9,
    "mathtext.default": "regular",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.8,
    "lines.linewidth": 1.2,
    "lines.markersize": 5,
    "figure.dpi": 100,
    "figure.constrained_layout.use": True,
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.03,
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}

#: The label of every error axis: the absolute error against the exact ground energy,
#: in mHa (matplotlib mathtext).
ERROR_LABEL = r"$|E - E_{\mathrm{exact}}|$ (mHa)"

#: The same absolute error in a caption (Markdown with HTML: shown alike in JupyterLab
#: and in a notebook rendered without MathJax).
ERROR_TEXT = "|<i>E</i> − <i>E</i><sub>exact</sub>|"


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def styled(func):
    """Run ``func`` (a figure function: it draws and saves) under :data:`STYLE`."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        import matplotlib

        matplotlib.use("Agg", force=False)
        with matplotlib.rc_context(STYLE):
            return func(*args, **kwargs)
    return wrapper


def figure_paths(stem) -> list[Path]:
    """``<stem>.png``, ``<stem>.pdf``, ``<stem>.svg`` (:data:`FORMATS`)."""
    stem = Path(stem)
    return [stem.with_name(f"{stem.name}.{fmt}") for fmt in FORMATS]


def caption_path(stem) -> Path:
    """The caption file beside a figure: ``<stem>.caption.md`` (Markdown, one paragraph)."""
    stem = Path(stem)
    return stem.with_name(f"{stem.name}.caption.md")


def read_caption(stem) -> str:
    """The caption :func:`save_figure` wrote beside ``<stem>.*`` ("" when none)."""
    path = caption_path(stem)
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


def save_figure(fig, stem, caption: str = "") -> tuple[Path, Path, Path]:
    """Write ``fig`` as ``<stem>.png`` (:data:`DPI` dpi), ``<stem>.pdf`` and ``<stem>.svg``
    under :data:`STYLE`, and ``caption`` as ``<stem>.caption.md``; close ``fig``.

    The caption is also each file's description (PNG ``Description``, PDF ``Subject``,
    SVG ``Description``).  Creates the folder.  Returns the three figure paths.
    """
    import matplotlib

    plt = pyplot()
    png, pdf, svg = figure_paths(stem)
    png.parent.mkdir(parents=True, exist_ok=True)
    meta = {"png": {"Description": caption, "Software": "qencode-nb"},
            "pdf": {"Subject": caption, "Creator": "qencode-nb"},
            "svg": {"Description": caption}}
    with matplotlib.rc_context(STYLE):
        for path, fmt in zip((png, pdf, svg), FORMATS):
            fig.savefig(path, format=fmt, metadata=meta[fmt])
    caption_path(stem).write_text(caption.strip() + "\n", encoding="utf-8")
    plt.close(fig)
    return png, pdf, svg


def png_bytes(fig, dpi: int = 150) -> bytes:
    """``fig`` as PNG bytes under :data:`STYLE` (a notebook's inline image; no file)."""
    import io

    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def show(stem, caption: str | None = None) -> None:
    """Show ``<stem>.png`` in a notebook at its printed size (100 px per inch) with its
    caption (:func:`read_caption` unless given) below it as Markdown."""
    from IPython.display import Image, Markdown, display
    from PIL import Image as PILImage

    png = figure_paths(stem)[0]
    with PILImage.open(png) as im:
        width = round(im.width / float(im.info.get("dpi", (DPI, DPI))[0]) * 100)
    display(Image(filename=str(png), width=width))
    text = read_caption(stem) if caption is None else caption
    if text:
        display(Markdown(text))
