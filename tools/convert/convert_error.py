class ConvertError(Exception):
    """Bad input: the converter prints the message and exits 1, writing nothing."""
