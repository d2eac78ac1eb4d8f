package upload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/internal/safefile"
)

// Spool files: one item each, named <seq>.item with seq zero-padded so that
// names sort in queue order. Layout (little endian):
//
//	magic "MPSPOOL1"
//	u64 created (Unix nanoseconds)
//	u32 number of meta pairs, then per pair: u32 len, key, u32 len, value
//	u32 data length, data
//	u32 CRC-32 (IEEE) of everything before it
//
// Files are written to a temporary name, synced, then renamed, so a crash
// leaves either the whole file or a *.tmp that the next run removes.
const (
	spoolMagic  = "MPSPOOL1"
	spoolSuffix = ".item"
	tmpSuffix   = ".tmp"
	// maxMetaPairs and maxMetaBytes bound an item's metadata.
	maxMetaPairs = 64
	maxMetaBytes = 64 << 10
)

// spool keeps items in a directory, reached only through root (an open
// descriptor of the directory that was checked), so that no symbolic link
// or renamed parent can send a write or a removal elsewhere.
type spool struct {
	dir  string
	root *os.Root
	log  *slog.Logger
}

func itemName(seq uint64) string { return fmt.Sprintf("%020d%s", seq, spoolSuffix) }

// encodeItem returns the file contents of an item.
func encodeItem(it *Item) ([]byte, error) {
	if len(it.Meta) > maxMetaPairs {
		return nil, fmt.Errorf("%d metadata pairs, at most %d", len(it.Meta), maxMetaPairs)
	}
	var b bytes.Buffer
	b.WriteString(spoolMagic)
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(it.Created.UnixNano())))
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(it.Meta))))
	keys := make([]string, 0, len(it.Meta))
	metaBytes := 0
	for k, v := range it.Meta {
		keys = append(keys, k)
		metaBytes += len(k) + len(v)
	}
	if metaBytes > maxMetaBytes {
		return nil, fmt.Errorf("%d bytes of metadata, at most %d", metaBytes, maxMetaBytes)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, s := range []string{k, it.Meta[k]} {
			b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
			b.WriteString(s)
		}
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(it.Data))))
	b.Write(it.Data)
	b.Write(binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(b.Bytes())))
	return b.Bytes(), nil
}

// decodeItem parses a spool file's contents, checking every length
// against what is left and the checksum against the contents.
func decodeItem(data []byte) (*Item, error) {
	if len(data) < len(spoolMagic)+8+4+4+4 {
		return nil, fmt.Errorf("%d bytes: too short", len(data))
	}
	if string(data[:len(spoolMagic)]) != spoolMagic {
		return nil, errors.New("bad magic")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("checksum mismatch")
	}
	r := body[len(spoolMagic):]
	u32 := func(what string) (uint32, error) {
		if len(r) < 4 {
			return 0, fmt.Errorf("truncated at %s", what)
		}
		v := binary.LittleEndian.Uint32(r)
		r = r[4:]
		return v, nil
	}
	bytesOf := func(what string) ([]byte, error) {
		n, err := u32(what)
		if err != nil {
			return nil, err
		}
		if uint64(n) > uint64(len(r)) {
			return nil, fmt.Errorf("%s of %d bytes, %d left", what, n, len(r))
		}
		v := r[:n]
		r = r[n:]
		return v, nil
	}
	created := int64(binary.LittleEndian.Uint64(r))
	r = r[8:]
	pairs, err := u32("metadata count")
	if err != nil {
		return nil, err
	}
	if pairs > maxMetaPairs {
		return nil, fmt.Errorf("%d metadata pairs, at most %d", pairs, maxMetaPairs)
	}
	it := &Item{Created: time.Unix(0, created)}
	if pairs > 0 {
		it.Meta = make(map[string]string, pairs)
	}
	for i := uint32(0); i < pairs; i++ {
		k, err := bytesOf("metadata key")
		if err != nil {
			return nil, err
		}
		v, err := bytesOf("metadata value")
		if err != nil {
			return nil, err
		}
		it.Meta[string(k)] = string(v)
	}
	d, err := bytesOf("data")
	if err != nil {
		return nil, err
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(r))
	}
	it.Data = bytes.Clone(d)
	it.size = int64(len(it.Data))
	return it, nil
}

// write stores it atomically.
func (s *spool) write(it *Item) error {
	data, err := encodeItem(it)
	if err != nil {
		return fmt.Errorf("upload: spool: %w", err)
	}
	final := itemName(it.seq)
	tmp := "item-" + strconv.FormatUint(it.seq, 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + tmpSuffix
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("upload: spool: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		s.root.Remove(tmp)
		return fmt.Errorf("upload: spool: writing %s: %w", filepath.Join(s.dir, tmp), err)
	}
	if err := s.root.Rename(tmp, final); err != nil {
		s.root.Remove(tmp)
		return fmt.Errorf("upload: spool: %w", err)
	}
	return nil
}

func (s *spool) remove(it *Item) {
	if err := s.root.Remove(itemName(it.seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("upload: cannot remove spooled item", "err", err)
	}
}

// openSpool creates dir if needed and loads the items a previous run left,
// oldest first: the newest ones within maxItems and maxBytes are kept, older
// ones removed and counted in skipped, as are unreadable files (logged).
func openSpool(dir string, maxItems int, maxBytes int64, log *slog.Logger) (*spool, []*Item, int, error) {
	root, err := openSpoolDir(dir)
	if err != nil {
		return nil, nil, 0, err
	}
	s := &spool{dir: dir, root: root, log: log}
	d, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, nil, 0, fmt.Errorf("upload: spool directory: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		root.Close()
		return nil, nil, 0, fmt.Errorf("upload: spool directory: %w", err)
	}
	type file struct {
		name string
		seq  uint64
	}
	var files []file
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, tmpSuffix):
			root.Remove(name) // a write cut short by a crash
		case strings.HasSuffix(name, spoolSuffix) && e.Type().IsRegular():
			seq, err := strconv.ParseUint(strings.TrimSuffix(name, spoolSuffix), 10, 64)
			if err != nil {
				log.Warn("upload: ignoring a file that is not a spooled item", "file", name)
				continue
			}
			files = append(files, file{name, seq})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].seq < files[j].seq })
	// Newest first, until the bounds are reached.
	var items []*Item
	var total int64
	skipped := 0
	for i := len(files) - 1; i >= 0; i-- {
		name := files[i].name
		if len(items) >= maxItems {
			root.Remove(name)
			skipped++
			continue
		}
		it, err := loadItem(root, name, maxBytes)
		if err != nil {
			log.Warn("upload: skipping unreadable spooled item", "file", filepath.Join(dir, name), "err", err)
			root.Remove(name)
			skipped++
			continue
		}
		if total+it.size > maxBytes {
			root.Remove(name)
			skipped++
			continue
		}
		it.seq = files[i].seq
		total += it.size
		items = append(items, it)
	}
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	return s, items, skipped, nil
}

// loadItem reads one spooled item: a regular file, not through a link,
// and no larger than the queue could hold.
func loadItem(root *os.Root, name string, maxBytes int64) (*Item, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|safefile.NoFollow|safefile.NonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := safefile.ReadOpened(f, maxBytes+maxMetaBytes+1024)
	if err != nil {
		return nil, err
	}
	return decodeItem(data)
}
