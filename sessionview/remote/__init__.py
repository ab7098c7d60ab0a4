"""Sessions on other hosts over SSH (asyncssh), kept out of the pure core.

:mod:`.address` parses ``ssh://[user@]host[:port]/path`` and ``host:path`` (pure); :mod:`.connection` holds one
SSH connection (agent, keys, ``~/.ssh/config``, known_hosts; never a password prompt); :mod:`.sftp` reads
files in ranges behind the core's :class:`~sessionview.core.fileaccess.FileAccess` seam; :mod:`.sessions`
lists and opens sessions; :mod:`.follow` follows one; :mod:`.writes` runs a write with the host's own
``sessionview``; :mod:`.fleet` lists every configured host's sessions at once.
"""
