# Sourced by the GPU scripts before anything else: the dataset is gitignored, so it must travel
# with the command (carry=["data/tinyshakespeare/input.txt"]); the GPU machine has no network.
# Exits with status 100 and one line (also in $out/FAILED.txt) when it is missing or not the file.
data=data/tinyshakespeare/input.txt
want=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed  # gpt/data.py's SHA256
if [ ! -f "$data" ]; then
    echo "FATAL: $data is missing. It is gitignored: carry it with the command" \
        "(carry=[\"$data\"]); this machine has no network to download it." | tee "$out/FAILED.txt"
    exit 100
fi
if [ "$(sha256sum "$data" | cut -d' ' -f1)" != "$want" ]; then
    echo "FATAL: $data is not Tiny Shakespeare (sha256 differs from $want)" | tee "$out/FAILED.txt"
    exit 100
fi
echo "dataset: $data ($(wc -c <"$data") bytes, sha256 ok)"
