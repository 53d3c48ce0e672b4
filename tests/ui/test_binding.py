"""The Qt binding must not leak references: PySide6 6.12.0 (Python 3.11) decref'd None on every
void method call, which crashed the editor after a few thousand edits."""
import sys




def test_void_methods_keep_none_alive(qapp):
    from PySide6.QtGui import QColor, QPen
    from PySide6.QtWidgets import QGraphicsLineItem

    item = QGraphicsLineItem(0, 0, 1, 1)
    pen = QPen(QColor("#3b82f6"))
    before = sys.getrefcount(None)
    for _ in range(2000):
        item.setPen(pen)
        item.setZValue(1.0)
    assert sys.getrefcount(None) - before > -100
