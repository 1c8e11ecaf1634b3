"""``python -m gradeloop``."""

from gradeloop.cli import entry

if __name__ == "__main__":
    entry()
