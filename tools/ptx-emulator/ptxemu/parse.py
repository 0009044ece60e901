"""Parsing of the PTX the conv3d kernels are made of.

A module is split into its kernels (.entry); a kernel's body into a flat
list of instructions and a label table. Inline-asm scopes ({ ... } blocks
with their own .reg declarations and labels, which LLVM pastes in verbatim,
several times with the same names) are flattened by renaming their local
names uniquely.
"""
import re

from .errors import EmulatorError


class Operand:
    """One instruction operand.

    kind: 'reg' (name), 'imm' (value: int; float immediates as their bit
    pattern, fbits = 32 or 64), 'sym' (a variable or label name), 'mem'
    (base: an Operand or symbol, offset: int), 'vec' (items), 'tensor'
    (base: Operand, items: coordinate operands), 'special' (name such as
    %tid.x), 'sink' (_)."""
    __slots__ = ('kind', 'name', 'value', 'fbits', 'base', 'offset', 'items')

    def __init__(self, kind, name=None, value=None, fbits=0, base=None,
                 offset=0, items=None):
        self.kind, self.name, self.value, self.fbits = kind, name, value, fbits
        self.base, self.offset, self.items = base, offset, items

    def __repr__(self):
        if self.kind in ('reg', 'sym', 'special'):
            return self.name
        if self.kind == 'imm':
            return str(self.value)
        if self.kind == 'mem':
            return '[%r+%d]' % (self.base, self.offset)
        if self.kind == 'vec':
            return '{%s}' % ', '.join(map(repr, self.items))
        if self.kind == 'tensor':
            return '[%r, {%s}]' % (self.base, ', '.join(map(repr, self.items)))
        return '_'


class Instruction:
    __slots__ = ('op', 'mods', 'args', 'pred', 'line', 'text')

    def __init__(self, op, args, pred, line, text):
        self.op = op                      # full opcode with modifiers
        self.mods = tuple(op.split('.'))  # ('mbarrier', 'try_wait', ...)
        self.args = args
        self.pred = pred                  # None or (negated, register)
        self.line = line
        self.text = text

    def has(self, *mods):
        return all(m in self.mods for m in mods)

    def __repr__(self):
        return '%s (line %d)' % (self.text, self.line)


class Param:
    __slots__ = ('name', 'size', 'align')

    def __init__(self, name, size, align):
        self.name, self.size, self.align = name, size, align


class SharedVar:
    __slots__ = ('name', 'size', 'align', 'dynamic')

    def __init__(self, name, size, align, dynamic):
        self.name, self.size, self.align, self.dynamic = name, size, align, dynamic


class Kernel:
    def __init__(self, name):
        self.name = name
        self.params = []        # [Param]
        self.regs = {}          # name -> declared type ('pred', 'b32', ...)
        self.shared = []        # [SharedVar] (module and kernel scope)
        self.insts = []         # [Instruction]
        self.labels = {}        # name -> instruction index
        self.maxntid = None
        self.reqntid = None
        self.cluster_dim = None
        self.target = None


_TYPE_BYTES = {'b8': 1, 'u8': 1, 's8': 1, 'b16': 2, 'u16': 2, 's16': 2,
               'f16': 2, 'bf16': 2, 'b32': 4, 'u32': 4, 's32': 4, 'f32': 4,
               'b64': 8, 'u64': 8, 's64': 8, 'f64': 8, 'pred': 1}


def _strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def _split_args(rest):
    args, depth, cur = [], 0, ''
    for ch in rest:
        if ch in '{[':
            depth += 1
        elif ch in '}]':
            depth -= 1
        if ch == ',' and depth == 0:
            args.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


_INT = re.compile(r'^-?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uU]?$')


def _parse_int(text):
    neg = text.startswith('-')
    body = text[1:] if neg else text
    body = body.rstrip('uU')
    if body.lower().startswith('0x'):
        v = int(body, 16)
    elif len(body) > 1 and body.startswith('0'):
        v = int(body, 8)
    else:
        v = int(body)
    return -v if neg else v


def parse_operand(text, rename):
    text = text.strip()
    if text == '_':
        return Operand('sink')
    if text.startswith('['):
        inner = text[1:-1].strip()
        m = re.match(r'^([^,{]+),\s*\{(.*)\}$', inner, re.S)
        if m:
            base = parse_operand(m.group(1), rename)
            items = [parse_operand(t, rename) for t in _split_args(m.group(2))]
            return Operand('tensor', base=base, items=items)
        m = re.match(r'^(.+?)\s*\+\s*(-?\s*(?:0[xX][0-9a-fA-F]+|\d+))$', inner)
        offset = 0
        if m:
            inner, offset = m.group(1).strip(), _parse_int(m.group(2).replace(' ', ''))
        else:
            m = re.match(r'^(.+?)\s*-\s*(\d+)$', inner)
            if m:
                inner, offset = m.group(1).strip(), -int(m.group(2))
        base = parse_operand(inner, rename)
        return Operand('mem', base=base, offset=offset)
    if text.startswith('{'):
        return Operand('vec', items=[parse_operand(t, rename)
                                     for t in _split_args(text[1:-1])])
    m = re.match(r'^0([fF])([0-9a-fA-F]{8})$', text)
    if m:
        return Operand('imm', value=int(m.group(2), 16), fbits=32)
    m = re.match(r'^0([dD])([0-9a-fA-F]{16})$', text)
    if m:
        return Operand('imm', value=int(m.group(2), 16), fbits=64)
    if _INT.match(text):
        return Operand('imm', value=_parse_int(text))
    if text.startswith('%') and ('.' in text or text in (
            '%laneid', '%warpid', '%nwarpid', '%smid', '%nsmid', '%gridid',
            '%cluster_ctarank', '%cluster_nctarank', '%is_explicit_cluster',
            '%lanemask_eq', '%lanemask_lt', '%lanemask_le', '%lanemask_gt',
            '%lanemask_ge', '%clock', '%clock64', '%globaltimer',
            '%dynamic_smem_size', '%total_smem_size')):
        # %tid.x, %ctaid.y, %cluster_ctaid.x ... (registers have no dots)
        return Operand('special', name=text)
    if text.startswith('!'):
        inner = parse_operand(text[1:], rename)
        inner.name = '!' + inner.name
        return inner
    if '|' in text:
        return Operand('reg', name='|'.join(rename(t.strip()) for t in text.split('|')))
    name = rename(text)
    if name.startswith('%') or name.endswith('$local'):
        return Operand('reg', name=name)
    return Operand('sym', name=name)


def split_modules(text):
    """{module name: PTX text} of a multi-module `conv3d-run --emit=ptx`
    output (one unnamed module if it has no markers)."""
    marker = '// conv3d: gpu.module @'
    if marker not in text:
        return {'': text}
    chunks = {}
    for chunk in text.split(marker)[1:]:
        name, _, body = chunk.partition('\n')
        chunks[name.strip()] = body
    return chunks


def parse_module(text):
    """{kernel name: Kernel} of a PTX module."""
    text = _strip_comments(text)
    kernels = {}
    module_shared = []
    target = None
    m = re.search(r'\.target\s+([\w,\s]+?)\s*\n', text)
    if m:
        target = m.group(1).split(',')[0].strip()
    pos = 0
    entry_re = re.compile(r'\.entry\s+([\w$]+)\s*\(')
    # module-scope shared variables (before the first entry)
    first = entry_re.search(text)
    head = text[:first.start()] if first else text
    for sm in re.finditer(r'(\.extern\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)(\[(\d*)\])?\s*;', head):
        module_shared.append(_shared_var(sm))
    while True:
        m = entry_re.search(text, pos)
        if not m:
            break
        kernel = Kernel(m.group(1))
        kernel.target = target
        kernel.shared = list(module_shared)
        close = text.index(')', m.end())
        for p in _split_args(text[m.end():close]):
            kernel.params.append(_param(p))
        body_open = text.index('{', close)
        directives = text[close + 1:body_open]
        for key in ('maxntid', 'reqntid', 'reqnctapercluster', 'explicitcluster'):
            dm = re.search(r'\.' + key + r'\s+([\d\s,]+)', directives)
            if dm:
                dims = [int(x) for x in dm.group(1).replace(',', ' ').split()]
                if key == 'maxntid':
                    kernel.maxntid = dims
                elif key == 'reqntid':
                    kernel.reqntid = dims
                elif key == 'reqnctapercluster':
                    kernel.cluster_dim = dims
        end = _matching_brace(text, body_open)
        _parse_body(kernel, text, body_open + 1, end)
        kernels[kernel.name] = kernel
        pos = end + 1
    if not kernels:
        raise EmulatorError('no .entry in the PTX')
    return kernels


def _shared_var(m):
    align = int(m.group(2) or 1)
    elem = _TYPE_BYTES.get(m.group(3), 1)
    dynamic = m.group(5) is not None and m.group(6) == ''
    if m.group(5) is not None and m.group(6):
        size = elem * int(m.group(6))
    else:
        size = 0 if dynamic else elem
    return SharedVar(m.group(4), size, align, dynamic)


def _param(text):
    text = ' '.join(text.split())
    m = re.match(r'^\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+'
                 r'(?:\.ptr(?:\s+\.(?:global|shared|const|local))?(?:\s+\.align\s+\d+)?\s+)?'
                 r'([\w$]+)(?:\[(\d+)\])?$', text)
    if not m:
        raise EmulatorError('cannot parse kernel parameter: ' + text)
    elem = _TYPE_BYTES[m.group(2)]
    size = elem * int(m.group(4) or 1)
    align = int(m.group(1) or elem)
    return Param(m.group(3), size, align)


def _matching_brace(text, open_pos):
    depth = 0
    for i in range(open_pos, len(text)):
        if text[i] == '{':
            depth += 1
        elif text[i] == '}':
            depth -= 1
            if depth == 0:
                return i
    raise EmulatorError('unbalanced braces in the PTX')


def _tokenize(text, start, end):
    """Statements of a body: ('open',), ('close',), ('label', name, line),
    ('stmt', text, line)."""
    items = []
    i = start
    line = text.count('\n', 0, start) + 1
    cur, depth, cur_line = '', 0, line
    while i < end:
        ch = text[i]
        if ch == '\n':
            line += 1
        if depth == 0 and not cur.strip():
            if ch == '{':
                items.append(('open',))
                i += 1
                cur = ''
                continue
            if ch == '}':
                items.append(('close',))
                i += 1
                cur = ''
                continue
        if not cur.strip():
            cur_line = line
        if ch in '{[':
            depth += 1
        elif ch in '}]':
            depth -= 1
        if ch == ';' and depth == 0:
            items.append(('stmt', cur.strip(), cur_line))
            cur = ''
        elif ch == ':' and depth == 0 and re.match(r'^\s*[\w$]+\s*$', cur) and \
                text[i + 1:i + 2] != ':':
            items.append(('label', cur.strip(), cur_line))
            cur = ''
        else:
            cur += ch
        i += 1
    if cur.strip():
        raise EmulatorError('unterminated statement: ' + cur.strip()[:80])
    return items


def _parse_body(kernel, text, start, end):
    items = _tokenize(text, start, end)
    # scope of each item, and the names each scope declares
    scope_of, stack, next_scope = [], [0], 1
    declared = {0: set()}
    labels_in = {0: set()}
    for item in items:
        if item[0] == 'open':
            stack.append(next_scope)
            declared[next_scope] = set()
            labels_in[next_scope] = set()
            next_scope += 1
            scope_of.append(None)
            continue
        if item[0] == 'close':
            stack.pop()
            scope_of.append(None)
            continue
        scope_of.append(tuple(stack))
        sc = stack[-1]
        if item[0] == 'label':
            labels_in[sc].add(item[1])
        elif item[1].startswith('.reg'):
            for name, _ in _reg_names(item[1]):
                declared[sc].add(name)

    def renamer(path):
        def rename(name):
            for sc in reversed(path):
                if sc and (name in declared[sc] or name in labels_in[sc]):
                    return '%s$%d$local' % (name, sc)
            return name
        return rename

    for item, path in zip(items, scope_of):
        if path is None:
            continue
        rename = renamer(path)
        if item[0] == 'label':
            kernel.labels[rename(item[1])] = len(kernel.insts)
            continue
        stmt, line = item[1], item[2]
        if stmt.startswith('.reg'):
            for name, ty in _reg_names(stmt):
                kernel.regs[rename(name)] = ty
            continue
        if stmt.startswith('.shared') or stmt.startswith('.extern'):
            sm = re.match(r'(\.extern\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)(\[(\d*)\])?\s*$', stmt)
            if sm:
                kernel.shared.append(_shared_var(sm))
                continue
        if stmt.startswith('.local'):
            raise EmulatorError('local memory (.local) is not emulated: ' + stmt)
        if stmt.startswith('.'):
            continue   # .loc, .pragma, ...
        pred = None
        pm = re.match(r'^@(!?)([%\w$]+)\s+(.*)$', stmt, re.S)
        if pm:
            pred = (pm.group(1) == '!', rename(pm.group(2)))
            stmt = pm.group(3)
        parts = stmt.split(None, 1)
        op = parts[0]
        args = _split_args(parts[1]) if len(parts) > 1 else []
        operands = [parse_operand(a, rename) for a in args]
        kernel.insts.append(Instruction(op, operands, pred, line,
                                        ' '.join(stmt.split())))
    kernel.insts.append(Instruction('ret', [], None, 0, 'ret (end of body)'))


def _reg_names(stmt):
    m = re.match(r'^\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.*)$', stmt.strip(), re.S)
    if not m:
        raise EmulatorError('cannot parse ' + stmt)
    ty = m.group(1)
    out = []
    for decl in m.group(2).split(','):
        decl = decl.strip()
        rm = re.match(r'^([%\w$]+)<(\d+)>$', decl)
        if rm:
            out.extend(('%s%d' % (rm.group(1), i), ty) for i in range(int(rm.group(2))))
        else:
            out.append((decl, ty))
    return out
