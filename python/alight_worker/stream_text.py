"""The text of an answer streamed token by token, without decoding the whole answer again at every token."""


class StreamText:
    """Each new token is decoded with the tokens since the last text sent (at least one before it, so tokenizers whose
    pieces depend on their neighbour, like SentencePiece's leading spaces, decode as in the whole): a token costs that
    window, not the answer so far (vLLM and TGI detokenize the same way). A token ending inside a multi-byte character
    decodes to U+FFFD; its text waits for the token that completes it, or for `rest` (the window grows only while no
    text comes). `decode` must not clean up spaces, or a window's text would not be a prefix of the whole's."""

    def __init__(self, decode):
        self.decode = decode
        self.ids = []
        self.prefix = 0  # the window's start
        self.read = 0  # the tokens before it are told

    def push(self, token):
        """The text this token adds ("" while it waits)."""
        self.ids.append(token)
        told = self.decode(self.ids[self.prefix : self.read])
        now = self.decode(self.ids[self.prefix :])
        if len(now) <= len(told) or now.endswith("\ufffd"):
            return ""
        self.prefix, self.read = self.read, len(self.ids)
        return now[len(told) :]

    def rest(self):
        """What is still held back once the answer ends (an incomplete character is sent as U+FFFD, as the whole
        decodes)."""
        return self.decode(self.ids[self.prefix :])[len(self.decode(self.ids[self.prefix : self.read])) :]
