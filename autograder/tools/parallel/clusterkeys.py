"""The keys of a grading Dask cluster: mutual TLS, so that only a holder of the course's key
can talk to its scheduler, workers or nannies.

    python -m autograder cluster-keys DIR    # once; then DIR goes to every grading machine

A Dask scheduler runs any connecting client's pickled function on its workers
(``client.run``), and a worker or nanny does the same for whoever reaches its port. With
plain ``tcp://`` on 127.0.0.1, every local user could: the red team (issue 51) ran code as
root on a root worker and read the solutions. So the cluster speaks ``tls://`` only, and every
end proves itself with a certificate of the course's own certificate authority:

- :func:`make_keys` writes ``ca.pem`` (the authority's certificate), ``cluster.pem`` and
  ``cluster-key.pem`` (the one certificate and key of the scheduler, the workers and the
  driver) into a folder of the instructor's alone (mode 0700, files 0600). The authority's own
  key is never written: it signs that one certificate and is gone, so no other certificate
  the cluster would accept can ever be made, and the key file is the only credential.
- :func:`dask_options` are the ``dask scheduler`` / ``dask worker`` options that use them
  (Dask's servers then ask every peer for a certificate of that authority).
- :func:`driver_security` is what the driver connects with: the keys of ``--cluster-keys DIR``,
  or Dask's own configuration (``distributed.comm.tls.ca-file``, ``.client.cert``,
  ``.client.key``, from ``~/.config/dask`` or ``DASK_DISTRIBUTED__COMM__TLS__...``); a
  ``tcp://`` scheduler is refused (:func:`refuse_plain`).
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from autograder.tools.errors import ParallelError
from autograder.tools.parallel import private

CA, CERT, KEY = "ca.pem", "cluster.pem", "cluster-key.pem"
#: Days the certificates stay valid: a course's life, a few times over. ``cluster-keys`` makes new ones.
VALID_DAYS = 5 * 365
#: The environment that makes every Dask connection of a process encrypted (plain tcp refused).
REQUIRE_ENCRYPTION_ENV = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}
#: The environment that leaves Dask's HTTP servers nothing to serve. ``--no-dashboard`` turns off only the
#: dashboard's pages: the scheduler still served, with no TLS or login and on every interface (port 8787), its
#: workers, every task's key (the students being graded), its own and its workers' logs, the tasks' exceptions
#: and the workers' call stacks, and each worker its metrics, to any user who reached the port (red team,
#: issue 51). No route, and :data:`HTTP_OPTIONS` keeps the empty server on 127.0.0.1.
NO_HTTP_ENV = {"DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES": "[]", "DASK_DISTRIBUTED__WORKER__HTTP__ROUTES": "[]"}
#: The options of ``dask scheduler`` and ``dask worker`` that keep their HTTP server off every other interface.
HTTP_OPTIONS = ["--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
#: The environment of the cluster's scheduler and workers.
CLUSTER_ENV = {**REQUIRE_ENCRYPTION_ENV, **NO_HTTP_ENV}
HOW = ("make the keys with `python -m autograder cluster-keys DIR`, start the scheduler and workers with them "
       "(docs/cluster.md), and pass --cluster-keys DIR")


@dataclass(frozen=True)
class KeyFiles:
    ca: Path
    cert: Path
    key: Path


def make_keys(folder: Path) -> KeyFiles:
    """Write a new authority's certificate and the cluster's certificate and key into ``folder``
    (made, mode 0700, where missing; it must be this user's alone). Files already there are
    refused, not replaced: running workers hold the old ones."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise ParallelError("cluster-keys: needs the cryptography package (pip install -e '.[cluster]')") from None

    folder = private.private_folder(Path(folder))
    files = key_files(folder)
    there = [p.name for p in (files.ca, files.cert, files.key) if os.path.lexists(p)]
    if there:
        raise ParallelError(f"cluster-keys: {folder} already holds {', '.join(there)}; remove them first (and "
                            "restart the cluster with the new keys), or use another folder")
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "autograder course cluster authority")])

    def certificate(subject, public_key, ca: bool):
        built = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(public_key)
                 .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                 .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
                 .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True))
        if ca:
            built = built.add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                                        critical=True)
        else:
            built = built.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                               ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        return built.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)

    cluster_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "autograder course cluster")])
    contents = {
        files.ca: certificate(ca_name, ca_key.public_key(), ca=True),
        files.cert: certificate(cluster_name, key.public_key(), ca=False),
        files.key: key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()),
    }
    for path, data in contents.items():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    return files


def key_files(folder: Path) -> KeyFiles:
    folder = Path(folder).absolute()
    return KeyFiles(folder / CA, folder / CERT, folder / KEY)


def checked(folder: Path) -> KeyFiles:
    """The key files in ``folder``, once the folder and each file are known to be this user's
    alone (:mod:`.private`); :class:`ParallelError` naming the problem otherwise."""
    private.private_folder(Path(folder), make=False)
    files = key_files(folder)
    for path in (files.ca, files.cert, files.key):
        private.check_private_file(path)
    return files


def dask_options(files: KeyFiles) -> list[str]:
    """The options of ``dask scheduler`` and ``dask worker`` that make them speak TLS with these keys."""
    return ["--tls-ca-file", str(files.ca), "--tls-cert", str(files.cert), "--tls-key", str(files.key)]


def security(files: KeyFiles):
    """Dask's :class:`~distributed.security.Security` of a client holding these keys."""
    from distributed.security import Security

    return Security(tls_ca_file=str(files.ca), tls_client_cert=str(files.cert), tls_client_key=str(files.key),
                    require_encryption=True)


def recipe(files: KeyFiles) -> str:
    """What to do with new keys: where they are, and the commands that use them."""
    tls = " ".join(dask_options(files))
    env = " ".join(f"{name}={value!r}" if value == "[]" else f"{name}={value}" for name, value in CLUSTER_ENV.items())
    http = " ".join(HTTP_OPTIONS)
    return "\n".join([
        f"wrote {files.ca}, {files.cert} and {files.key} (yours alone: keep them so; copy the folder, mode 0700,",
        "to every grading machine, at a path no grading kernel can see)",
        "the scheduler:",
        f"  {env} DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0 "
        f"dask scheduler --protocol tls --port 8786 {http} {tls}",
        "a worker process per core on each grading machine:",
        f"  {env} dask worker tls://SCHEDULER:8786 --nworkers 2 "
        f"--nthreads 1 {http} --local-directory DIR_OF_YOURS {tls}",
        "the driver, in the course folder:",
        f"  python -m autograder autograde ASSIGNMENT --scheduler tls://SCHEDULER:8786 "
        f"--cluster-keys {files.ca.parent}",
    ])


def refuse_plain(address: str) -> None:
    """A scheduler address that is not ``tls://`` is refused: whoever reaches a plain Dask port
    runs code as its workers."""
    if not address.startswith("tls://"):
        raise ParallelError(
            f"autograde: the scheduler address {address} is not tls://: a Dask scheduler without TLS runs the "
            "code of any client that reaches it, as its workers' user (root, for the root jail), so the course "
            f"grades only on a cluster secured with its own keys: {HOW}")


def driver_security(address: str, keys: Path | None):
    """How the driver connects to ``address``: with the keys in ``keys``, or else those Dask's own
    configuration names (``distributed.comm.tls.*``). :class:`ParallelError` for a ``tcp://``
    address, or when no keys are given either way."""
    refuse_plain(address)
    if keys is not None:
        return security(checked(keys))
    from distributed.security import Security

    configured = Security(require_encryption=True)
    if not (configured.tls_ca_file and configured.tls_client_cert):
        raise ParallelError(f"autograde: no keys for the TLS scheduler at {address}: pass --cluster-keys DIR (the "
                            "folder `python -m autograder cluster-keys DIR` made), or name them in Dask's "
                            "configuration (distributed.comm.tls.ca-file, .client.cert, .client.key)")
    for path in (configured.tls_client_key, configured.tls_client_cert):
        if path and "\n" not in path:  # a file, not the key itself
            private.check_private_file(Path(path))
    return configured
