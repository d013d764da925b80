"""The method templates of batched dataclasses for common shapes (see
cubepy/ir/batched_dataclass.py SHIPPED_SHAPES), compiled like any module.
Written by batched_dataclass.write_shipped_shapes(): do not edit."""
SHAPES = [('__eq__', 0), ('__eq__', 1), ('__eq__', 2), ('__eq__', 3), ('__eq__', 4), ('__eq__', 5), ('__eq__', 6), ('__eq__', 7), ('__eq__', 8), ('__eq__', 9), ('__eq__', 10), ('__eq__', 11), ('__eq__', 12), ('__hash__', 0), ('__hash__', 1), ('__hash__', 2), ('__hash__', 3), ('__hash__', 4), ('__hash__', 5), ('__hash__', 6), ('__hash__', 7), ('__hash__', 8), ('__hash__', 9), ('__hash__', 10), ('__hash__', 11), ('__hash__', 12), ('__init__', 0, 0, False), ('__init__', 0, 0, True), ('__init__', 0, 1, False), ('__init__', 0, 2, False), ('__init__', 0, 3, False), ('__init__', 0, 4, False), ('__init__', 0, 5, False), ('__init__', 0, 6, False), ('__init__', 0, 7, False), ('__init__', 0, 8, False), ('__init__', 0, 9, False), ('__init__', 0, 10, False), ('__init__', 0, 11, False), ('__init__', 0, 12, False), ('__init__', 1, 0, False), ('__init__', 1, 0, True), ('__init__', 2, 0, False), ('__init__', 2, 0, True), ('__init__', 3, 0, False), ('__init__', 3, 0, True), ('__init__', 4, 0, False), ('__init__', 4, 0, True), ('__init__', 5, 0, False), ('__init__', 5, 0, True), ('__init__', 6, 0, False), ('__init__', 6, 0, True), ('__init__', 7, 0, False), ('__init__', 7, 0, True), ('__init__', 8, 0, False), ('__init__', 8, 0, True), ('__init__', 9, 0, False), ('__init__', 9, 0, True), ('__init__', 10, 0, False), ('__init__', 10, 0, True), ('__init__', 11, 0, False), ('__init__', 11, 0, True), ('__init__', 12, 0, False), ('__init__', 12, 0, True)]

def make0(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return ()==()
  return NotImplemented
 return __eq__
def make1(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,)==(other._batched_field_0_,)
  return NotImplemented
 return __eq__
def make2(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,)==(other._batched_field_0_,other._batched_field_1_,)
  return NotImplemented
 return __eq__
def make3(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,)
  return NotImplemented
 return __eq__
def make4(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,)
  return NotImplemented
 return __eq__
def make5(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,)
  return NotImplemented
 return __eq__
def make6(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,)
  return NotImplemented
 return __eq__
def make7(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,)
  return NotImplemented
 return __eq__
def make8(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,)
  return NotImplemented
 return __eq__
def make9(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,)
  return NotImplemented
 return __eq__
def make10(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,)
  return NotImplemented
 return __eq__
def make11(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,)
  return NotImplemented
 return __eq__
def make12(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,other._batched_field_11_,)
  return NotImplemented
 return __eq__
def make13(_setattr):
 def __hash__(self):
  return hash(())
 return __hash__
def make14(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,))
 return __hash__
def make15(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,))
 return __hash__
def make16(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,))
 return __hash__
def make17(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,))
 return __hash__
def make18(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,))
 return __hash__
def make19(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,))
 return __hash__
def make20(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,))
 return __hash__
def make21(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,))
 return __hash__
def make22(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,))
 return __hash__
def make23(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,))
 return __hash__
def make24(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,))
 return __hash__
def make25(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,))
 return __hash__
def make26(_setattr):
 def __init__(self):
  pass
 return __init__
def make27(_setattr):
 def __init__(self):
  self.__post_init__()
  pass
 return __init__
def make28(_setattr):
 def __init__(self, *, _batched_field_0_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  pass
 return __init__
def make29(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  pass
 return __init__
def make30(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  pass
 return __init__
def make31(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  pass
 return __init__
def make32(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  pass
 return __init__
def make33(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  pass
 return __init__
def make34(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  pass
 return __init__
def make35(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  pass
 return __init__
def make36(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  pass
 return __init__
def make37(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  pass
 return __init__
def make38(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  pass
 return __init__
def make39(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  pass
 return __init__
def make40(_setattr):
 def __init__(self, _batched_field_0_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  pass
 return __init__
def make41(_setattr):
 def __init__(self, _batched_field_0_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  self.__post_init__()
  pass
 return __init__
def make42(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  pass
 return __init__
def make43(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  self.__post_init__()
  pass
 return __init__
def make44(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  pass
 return __init__
def make45(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  self.__post_init__()
  pass
 return __init__
def make46(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  pass
 return __init__
def make47(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  self.__post_init__()
  pass
 return __init__
def make48(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  pass
 return __init__
def make49(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  self.__post_init__()
  pass
 return __init__
def make50(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  pass
 return __init__
def make51(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  self.__post_init__()
  pass
 return __init__
def make52(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  pass
 return __init__
def make53(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  self.__post_init__()
  pass
 return __init__
def make54(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  pass
 return __init__
def make55(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  self.__post_init__()
  pass
 return __init__
def make56(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  pass
 return __init__
def make57(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  self.__post_init__()
  pass
 return __init__
def make58(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  pass
 return __init__
def make59(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  self.__post_init__()
  pass
 return __init__
def make60(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  pass
 return __init__
def make61(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  self.__post_init__()
  pass
 return __init__
def make62(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  pass
 return __init__
def make63(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  self.__post_init__()
  pass
 return __init__
