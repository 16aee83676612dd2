#!/usr/bin/python3
"""Independent check of Brine's Salt protocol crypto, written for Brine
(no Salt code): verifies go_vectors.json with Python's cryptography,
msgpack and OpenSSL's libcrypto (ctypes), then writes py_vectors.json for
the Go tests to verify in turn.

Primitives, as Salt 3006 uses them:
  * RSA-OAEP with MGF1, hash SHA-1 or SHA-224, empty label
  * PKCS#1 v1.5 signatures over SHA-1 or SHA-224
  * X9.31 "private encrypt" (OpenSSL RSA_private_encrypt, RSA_X931_PADDING)
  * session cipher: base64 key = AES-192 key (24) + HMAC-SHA256 key (32);
    blob = IV(16) + AES-CBC(PKCS7("pickle::" + [nonce] + msgpack)) + HMAC
  * fingerprint: hash of the PEM body lines, hex pairs joined with ":"
"""
import base64
import hashlib
import hmac
import json
import os
import sys

import msgpack
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HERE = os.path.dirname(os.path.abspath(__file__))
MESSAGE = b"Salt payload to protect"
AES_KEY = b"aes-key-string-for-vectors"
NONCE = "0123456789abcdef0123456789abcdef"
CRYPTICLE = base64.b64encode(bytes(range(56))).decode()
SESSION = base64.b64encode(bytes(range(100, 156))).decode()
HASHES = {"SHA1": hashes.SHA1, "SHA224": hashes.SHA224}


def path(name):
    return os.path.join(HERE, name)


def load_priv(name):
    with open(path(name), "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def oaep(h):
    return padding.OAEP(mgf=padding.MGF1(algorithm=HASHES[h]()), algorithm=HASHES[h](), label=None)


def x931_verify(pub, sig):
    n, e = pub.public_numbers().n, pub.public_numbers().e
    k = (n.bit_length() + 7) // 8
    m = pow(int.from_bytes(sig, "big"), e, n)
    if m & 0xF != 12:
        m = n - m
    em = m.to_bytes(k, "big")
    assert em[0] in (0x6A, 0x6B) and em[-1] == 0xCC, em[:4].hex()
    body = em[1:-1]
    if em[0] == 0x6B:
        i = 0
        while body[i] == 0xBB:
            i += 1
        assert i > 0 and body[i] == 0xBA
        body = body[i + 1:]
    return body


class LibCrypto:
    """OpenSSL's legacy RSA_private_encrypt/RSA_public_decrypt with
    RSA_X931_PADDING through ctypes: the calls Salt makes. (The openssl
    command line routes -x931 through the provider API, which insists on
    a digest.)"""

    X931 = 5

    def __init__(self):
        import ctypes
        import ctypes.util
        c = ctypes.CDLL(ctypes.util.find_library("crypto"))
        c.BIO_new_mem_buf.restype = ctypes.c_void_p
        c.BIO_new_mem_buf.argtypes = (ctypes.c_char_p, ctypes.c_int)
        c.BIO_free.argtypes = (ctypes.c_void_p,)
        for fn in (c.PEM_read_bio_RSAPrivateKey, c.PEM_read_bio_RSA_PUBKEY):
            fn.restype = ctypes.c_void_p
            fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        c.RSA_size.argtypes = (ctypes.c_void_p,)
        for fn in (c.RSA_private_encrypt, c.RSA_public_decrypt):
            fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)
        self.c, self.ctypes = c, ctypes

    def _key(self, name, public):
        with open(path(name), "rb") as f:
            pem = f.read()
        bio = self.c.BIO_new_mem_buf(pem, len(pem))
        read = self.c.PEM_read_bio_RSA_PUBKEY if public else self.c.PEM_read_bio_RSAPrivateKey
        rsa = read(bio, None, None, None)
        self.c.BIO_free(bio)
        assert rsa, name
        return rsa

    def sign(self, keyfile, msg):
        rsa = self._key(keyfile, False)
        buf = self.ctypes.create_string_buffer(self.c.RSA_size(rsa))
        n = self.c.RSA_private_encrypt(len(msg), msg, buf, rsa, self.X931)
        assert n > 0
        return buf.raw[:n]

    def verify(self, pubfile, sig):
        rsa = self._key(pubfile, True)
        buf = self.ctypes.create_string_buffer(self.c.RSA_size(rsa))
        n = self.c.RSA_public_decrypt(len(sig), sig, buf, rsa, self.X931)
        assert n >= 0, "RSA_public_decrypt failed"
        return buf.raw[:n]


LIB = LibCrypto()


def crypticle_keys(key_string):
    raw = base64.b64decode(key_string)
    assert len(raw) == 56
    return raw[:24], raw[24:]


def crypticle_encrypt(key_string, data):
    aes_key, hmac_key = crypticle_keys(key_string)
    pad = 16 - len(data) % 16
    data += bytes([pad]) * pad
    iv = os.urandom(16)
    enc = Cipher(algorithms.AES(aes_key), modes.CBC(iv)).encryptor()
    body = iv + enc.update(data) + enc.finalize()
    return body + hmac.new(hmac_key, body, hashlib.sha256).digest()


def crypticle_decrypt(key_string, blob):
    aes_key, hmac_key = crypticle_keys(key_string)
    body, sig = blob[:-32], blob[-32:]
    assert hmac.compare_digest(hmac.new(hmac_key, body, hashlib.sha256).digest(), sig), "hmac"
    dec = Cipher(algorithms.AES(aes_key), modes.CBC(body[:16])).decryptor()
    data = dec.update(body[16:]) + dec.finalize()
    return data[: -data[-1]]


def texts(v):
    """Raw strings that are UTF-8 become str, as Salt's decoding does."""
    if isinstance(v, dict):
        return {texts(k): texts(x) for k, x in v.items()}
    if isinstance(v, list):
        return [texts(x) for x in v]
    if isinstance(v, bytes):
        try:
            return v.decode()
        except UnicodeError:
            return v
    return v


def unpack(b):
    return texts(msgpack.unpackb(b, raw=True, use_list=True, strict_map_key=False))


def pack(v):
    return msgpack.packb(v, use_bin_type=False)


def finger(name, h):
    with open(path(name), "rb") as f:
        lines = [x for x in f.readlines() if x.strip()][1:-1]
    digest = getattr(hashlib, h)(b"".join(lines).replace(b"\r\n", b"\n")).hexdigest()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def clean(pem):
    return "\n".join(pem.strip().splitlines())


def check_go(go_key, py_key):
    with open(path("go_vectors.json")) as f:
        v = {k: (bytes.fromhex(x) if not k.startswith("finger") else x) for k, x in json.load(f).items()}
    for h in ("SHA1", "SHA224"):
        assert py_key.decrypt(v["oaep_" + h.lower()], oaep(h)) == MESSAGE
        go_key.public_key().verify(v["pkcs1v15_" + h.lower()], MESSAGE, padding.PKCS1v15(), HASHES[h]())
    digest = hashlib.sha256(AES_KEY).hexdigest().encode()
    for name, msg in (("x931_salt", b"salt"), ("x931_digest", digest)):
        assert x931_verify(go_key.public_key(), v[name]) == msg, name
        assert LIB.verify("go_key.pub", v[name]) == msg, name
        assert LIB.sign("go_key.pem", msg) == v[name], name
    pt = crypticle_decrypt(CRYPTICLE, v["crypticle_nonce"])
    assert pt.startswith(b"pickle::" + NONCE.encode())
    assert unpack(pt[8 + 32:]) == {"fun": "test.ping", "arg": [], "n": 7}
    assert unpack(crypticle_decrypt(CRYPTICLE, v["crypticle_plain"])[8:]) == ["x", 1, None]
    assert crypticle_decrypt(CRYPTICLE, v["crypticle_raw"]) == MESSAGE
    assert finger("go_key.pub", "sha256") == v["finger_sha256"]
    assert finger("go_key.pub", "md5") == v["finger_md5"]
    # Go's key files are byte-identical to what cryptography writes.
    with open(path("go_key.pem"), "rb") as f:
        assert f.read() == go_key.private_bytes(serialization.Encoding.PEM,
                                                serialization.PrivateFormat.TraditionalOpenSSL,
                                                serialization.NoEncryption())
    with open(path("go_key.pub"), "rb") as f:
        go_pub_pem = f.read()
    assert go_pub_pem == go_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    # The minion's _auth request, read as a master would.
    req = unpack(v["frame_auth_request"])
    assert list(req) == ["enc", "load", "version"] and req["enc"] == "clear" and req["version"] == 3
    load = req["load"]
    assert list(load) == ["cmd", "id", "nonce", "enc_algo", "sig_algo", "token", "pub"], list(load)
    assert load["cmd"] == "_auth" and load["id"] == "minion1" and load["nonce"] == NONCE
    assert load["pub"] == clean(go_pub_pem.decode())
    assert py_key.decrypt(load["token"], oaep("SHA1")) == v["auth_token_plain"]
    # The minion's encrypted _return.
    req = unpack(v["frame_return_request"])
    assert list(req) == ["enc", "load", "version", "id", "enc_algo", "sig_algo"], list(req)
    ret = unpack(crypticle_decrypt(CRYPTICLE, req["load"])[8:])
    assert list(ret) == ["cmd", "id", "success", "return", "retcode", "jid", "fun", "fun_args",
                         "nonce", "ts", "tok"], list(ret)
    assert ret["return"] is True and ret["jid"] == "20261201013000123456"
    assert x931_verify(go_key.public_key(), ret["tok"]) == b"salt"
    # The Go master's signed _auth reply, checked as a minion would.
    outer = unpack(v["frame_go_auth_reply"])
    assert list(outer) == ["enc", "load", "sig"] and outer["enc"] == "clear"
    py_key.public_key().verify(outer["sig"], outer["load"], padding.PKCS1v15(), hashes.SHA1())
    reply = unpack(outer["load"])
    assert list(reply) == ["enc", "pub_key", "publish_port", "token", "aes", "session", "sig", "nonce"], list(reply)
    with open(path("py_key.pub")) as f:
        assert reply["pub_key"] == clean(f.read())
    aes = go_key.decrypt(reply["aes"], oaep("SHA1"))
    assert aes == CRYPTICLE.encode()
    assert LIB.verify("py_key.pub", reply["sig"]) == hashlib.sha256(aes).hexdigest().encode()
    assert x931_verify(py_key.public_key(), reply["sig"]) == hashlib.sha256(aes).hexdigest().encode()
    assert go_key.decrypt(reply["token"], oaep("SHA1")) == v["auth_token_plain"]
    assert go_key.decrypt(reply["session"], oaep("SHA1")) == SESSION.encode()
    assert reply["nonce"] == NONCE and reply["publish_port"] == 4505
    # The Go master's send_private pillar reply.
    priv = unpack(v["frame_go_private_reply"])
    assert list(priv) == ["key", "pillar"]
    pkey = go_key.decrypt(priv["key"], oaep("SHA1")).decode()
    signed = unpack(crypticle_decrypt(pkey, priv["pillar"])[8:])
    assert list(signed) == ["data", "sig"]
    py_key.public_key().verify(signed["sig"], signed["data"], padding.PKCS1v15(), hashes.SHA1())
    data = unpack(signed["data"])
    assert list(data) == ["key", "pillar", "nonce"] and data["key"] == priv["key"] and data["nonce"] == NONCE
    assert data["pillar"] == {"role": "web", "ports": [80, 443]}
    return v


def make_py(go_key, py_key, go_v):
    out = {}
    put = lambda k, b: out.__setitem__(k, b.hex())
    for h in ("SHA1", "SHA224"):
        put("oaep_" + h.lower(), go_key.public_key().encrypt(MESSAGE, oaep(h)))
        put("pkcs1v15_" + h.lower(), py_key.sign(MESSAGE, padding.PKCS1v15(), HASHES[h]()))
    digest = hashlib.sha256(AES_KEY).hexdigest().encode()
    put("x931_salt", LIB.sign("py_key.pem", b"salt"))
    put("x931_digest", LIB.sign("py_key.pem", digest))
    put("crypticle_nonce", crypticle_encrypt(
        CRYPTICLE, b"pickle::" + NONCE.encode() + pack({"fun": "test.ping", "arg": [], "n": 7})))
    put("crypticle_raw", crypticle_encrypt(CRYPTICLE, MESSAGE))
    out["finger_sha256"] = finger("py_key.pub", "sha256")
    out["finger_md5"] = finger("py_key.pub", "md5")
    # A master's signed _auth reply to the Go minion (auth_mode 1).
    minion_pub = go_key.public_key()
    with open(path("py_key.pub")) as f:
        master_pub = clean(f.read())
    session = base64.b64encode(os.urandom(56)).decode()
    reply = {
        "enc": "pub",
        "pub_key": master_pub,
        "publish_port": 4505,
        "token": minion_pub.encrypt(go_v["auth_token_plain"], oaep("SHA1")),
        "aes": minion_pub.encrypt(CRYPTICLE.encode(), oaep("SHA1")),
        "session": minion_pub.encrypt(session.encode(), oaep("SHA1")),
        "sig": LIB.sign("py_key.pem",
                        hashlib.sha256(CRYPTICLE.encode()).hexdigest().encode()),
        "nonce": NONCE,
    }
    body = pack(reply)
    put("frame_auth_reply", pack({"enc": "clear", "load": body,
                                  "sig": py_key.sign(body, padding.PKCS1v15(), hashes.SHA1())}))
    # A publication.
    job = {"fun": "test.arg", "arg": ["a", 1], "tgt": "*", "jid": "20261201013000123456", "ret": "",
           "tgt_type": "glob", "user": "root", "serial": 1}
    enc = crypticle_encrypt(CRYPTICLE, b"pickle::" + pack(job))
    put("frame_publish", pack({"enc": "aes", "load": enc, "sig_algo": "PKCS1v15-SHA1",
                               "sig": py_key.sign(enc, padding.PKCS1v15(), hashes.SHA1())}))
    # master.pem as Salt writes it with key_pass set.
    with open(path("py_key_pass.pem"), "wb") as f:
        f.write(py_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                     serialization.BestAvailableEncryption(b"brine-pass")))
    # A master's send_private pillar reply.
    pkey = base64.b64encode(os.urandom(56)).decode()
    enc_key = minion_pub.encrypt(pkey.encode(), oaep("SHA1"))
    tosign = pack({"key": enc_key, "pillar": {"role": "db", "ports": [5432]}, "nonce": NONCE})
    signed = pack({"data": tosign, "sig": py_key.sign(tosign, padding.PKCS1v15(), hashes.SHA1())})
    put("frame_private_reply", pack({"key": enc_key, "pillar": crypticle_encrypt(pkey, b"pickle::" + signed)}))
    with open(path("py_vectors.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    go_key, py_key = load_priv("go_key.pem"), load_priv("py_key.pem")
    go_v = check_go(go_key, py_key)
    make_py(go_key, py_key, go_v)
    print("go_vectors.json verified; py_vectors.json written", file=sys.stderr)


if __name__ == "__main__":
    main()
