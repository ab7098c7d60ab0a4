import pytest

import pg_server


@pytest.fixture(scope="session")
def pg_server_(tmp_path_factory):
    reason = pg_server.available()
    if reason:
        pytest.skip(reason)
    srv = pg_server.start()
    yield srv
    srv.stop()


@pytest.fixture
def pg(pg_server_):
    """The server, with a fresh database for this test: ``pg.db_url`` (socket, superuser)."""
    db = pg_server_.new_db()
    pg_server_.db = db
    pg_server_.db_url = pg_server_.url(db)
    return pg_server_
