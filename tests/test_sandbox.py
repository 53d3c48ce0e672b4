"""The suite never writes the user's real settings, recovery files or documents, and the
`make run` check names the Debian packages Qt's xcb plugin needs."""
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TEST_HOME


def test_settings_and_recovery_live_in_the_test_home(tmp_path):
    from PySide6.QtCore import QSettings, QStandardPaths
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    app.setOrganizationName("Designer")
    app.setApplicationName("Designer")
    settings = QSettings()
    assert Path(settings.fileName()).is_relative_to(TEST_HOME), settings.fileName()
    documents = QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation)
    assert Path(documents).is_relative_to(TEST_HOME), documents

    from designer.ui.document.autosave import recovery_dir

    assert recovery_dir().is_relative_to(tmp_path)
    assert os.environ["HOME"] == str(TEST_HOME)


sys.path.insert(0, str(ROOT / "packaging"))
import check_qt_libs  # noqa: E402


@pytest.mark.parametrize("soname, package", [
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libEGL.so.1", "libegl1"),
    ("libdbus-1.so.3", "libdbus-1-3"),
])
def test_debian_package_of_each_library(soname, package):
    assert check_qt_libs.package_for(soname) == package


def test_missing_libraries_are_read_from_ldd():
    output = """\
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f5826524000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
"""
    assert check_qt_libs.missing_libraries(output) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
